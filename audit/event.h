// The one event stream every transcript format is normalized to (docs/audit.md).
#pragma once

#include <cstdint>
#include <string>

namespace kd::audit {

enum class EventKind {
  ModelText,  // text the model produced (assistant / author output)
  FileRead,   // path read (a read tool, or a recognizable shell read)
  FileWrite,  // path written, edited, created, moved or deleted
  Command,    // a command run; `cwd` is where
  Commit,     // a commit; `text` is its message
  Subagent,   // a subagent dispatched; `text` is its id or description
  Violation,  // a denial the kdispatch sandbox recorded; `text` names layer and op
  Finish,     // the author's finish payload (kdispatch); `text` is its ledger
  // A supervising person's decision about a call (kdispatch author --supervise): `tool` is the
  // decision (approved, approved_by_prefix, prefix_approved, denied, stopped, note), `text`
  // what it was about and why. A denial is the person's, never a refusal of the sandbox.
  Supervision,
};

const char* event_kind_name(EventKind kind);

struct Event {
  EventKind kind = EventKind::ModelText;
  std::uint64_t line = 0;  // 1-based line of the record in its file
  std::string ts;          // timestamp as recorded, may be empty
  std::string path;        // FileRead / FileWrite: absolute, lexically normalized
  std::string text;        // see EventKind
  std::string content;     // FileWrite: the full new content when the record carries it
  std::string cwd;         // working directory the record was made in
  std::string tool;        // the tool or record that produced the event
  std::string role;        // kdispatch: author | verifier; empty for other harnesses
};

}  // namespace kd::audit
