// Reads one transcript file of any supported harness and turns it into Events (docs/audit.md).
// Formats: kdispatch transcripts, Claude Code session JSONL, Codex rollout JSONL (plain or .zst)
// and the `codex exec --json` stream. Unknown record types are counted, malformed lines and a
// torn last line are reported; none of them stops the import.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "audit/event.h"
#include "contract/transcript_chain.h"

namespace kd::audit {

enum class Format { Unknown, Kdispatch, ClaudeCode, CodexRollout, CodexExec };
const char* format_name(Format f);

// What a kdispatch transcript's header says about its own run.
struct HeaderInfo {
  std::string family, experiment, worktree, artifact_dir;
  std::vector<std::string> references, no_peek;
};

struct FileStats {
  std::string path;
  Format format = Format::Unknown;
  std::uint64_t lines = 0;
  std::uint64_t bytes = 0;
  std::uint64_t events = 0;
  std::uint64_t malformed = 0;
  std::vector<std::uint64_t> malformed_lines;    // the first few, for the report
  std::map<std::string, std::uint64_t> unknown;  // record type -> count
  bool torn_last_line = false;
  std::optional<contract::ChainReport> chain;  // kdispatch transcripts when the chain was checked
};

struct ImportOptions {
  bool check_chain = true;  // feed kdispatch lines to the chain verifier
  bool want_events = true;  // false: chain only, records are never parsed
};

struct ImportSink {
  std::function<void(const Event&)> event;
  std::function<void(const HeaderInfo&)> header;  // kdispatch header, before its events
  std::function<void(const std::string&)> cwd;    // a foreign transcript's recorded cwd, first seen
};

// Imports `path`. Throws kd::Error only when the file cannot be read at all.
FileStats import_file(const std::filesystem::path& path, const ImportOptions& options,
                      const ImportSink& sink);

// Per-record state shared by the format handlers.
struct ImportState {
  const ImportSink* sink = nullptr;
  FileStats* stats = nullptr;
  std::uint64_t line = 0;
  std::string ts;        // the current record's timestamp
  std::string role;      // the current record's role (kdispatch)
  std::string cwd;       // current working directory of the session
  std::string worktree;  // kdispatch: where relative tool paths point
  bool cwd_reported = false;
  void emit(Event e);
  void set_cwd(const std::string& dir);
  void unknown(const std::string& type) { ++stats->unknown[type]; }
};

// One record each; a handler counts what it does not know through st.unknown().
void import_kdispatch_record(const nlohmann::json& rec, ImportState& st);
void import_claude_record(const nlohmann::json& rec, ImportState& st);
void import_codex_record(const nlohmann::json& rec, ImportState& st);
void import_codex_exec_record(const nlohmann::json& rec, ImportState& st);

// Whether a Claude Code record type is one the importer knows (it may still carry no facts).
bool claude_type_known(std::string_view type);

// Helpers for the handlers: a string member or "", and a shell-quoted argv.
std::string str_of(const nlohmann::json& obj, const char* key);
std::string join_argv(const nlohmann::json& argv);

}  // namespace kd::audit
