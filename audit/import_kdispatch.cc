// kdispatch transcripts (docs/transcripts.md): the author's tools map one to one onto events.
#include "audit/importer.h"
#include "audit/shell_scan.h"
#include "contract/transcript_records.h"

namespace kd::audit {
namespace {

namespace records = contract::transcript;

std::vector<std::string> strings_of(const nlohmann::json& obj, const char* key) {
  std::vector<std::string> out;
  auto it = obj.find(key);
  if (it == obj.end()) return out;
  if (it->is_string()) out.push_back(it->get<std::string>());
  if (it->is_array())
    for (const auto& v : *it)
      if (v.is_string()) out.push_back(v.get<std::string>());
  return out;
}

void tool_call(const nlohmann::json& data, ImportState& st) {
  std::string name = str_of(data, "name");
  const nlohmann::json empty = nlohmann::json::object();
  auto it = data.find("input");
  const nlohmann::json& in = it != data.end() && it->is_object() ? *it : empty;
  Event e;
  e.tool = name;
  e.cwd = st.worktree;
  if (name == "read_file" || name == "list_dir") {
    e.kind = EventKind::FileRead;
    e.path = resolve_path(st.worktree, str_of(in, "path"));
    st.emit(std::move(e));
  } else if (name == "write_file" || name == "edit_file") {
    e.kind = EventKind::FileWrite;
    e.path = resolve_path(st.worktree, str_of(in, "path"));
    if (name == "write_file") e.content = str_of(in, "content");
    st.emit(std::move(e));
  } else if (name == "run" || name == "run_on_chip") {
    auto cmd = in.find("command");
    e.kind = EventKind::Command;
    e.text = cmd == in.end() ? "" : join_argv(*cmd);
    std::string cwd = str_of(in, "cwd");
    if (!cwd.empty()) e.cwd = resolve_path(st.worktree, cwd);
    std::string text = e.text, dir = e.cwd;
    st.emit(std::move(e));
    scan_shell(text, dir, [&](Event found) { st.emit(std::move(found)); });
  } else if (name == "commit") {
    e.kind = EventKind::Commit;
    e.text = str_of(in, "message");
    st.emit(std::move(e));
  } else if (name == "finish") {
    e.kind = EventKind::Finish;
    e.text = str_of(in, "ledger");
    e.content = in.dump();
    st.emit(std::move(e));
  } else if (name != "git_diff") {
    st.unknown(std::string(records::kToolCall) + ":" + name);
  }
}

// "denied run `make -j` (call p1): use the screen mode first".
void decision(const nlohmann::json& data, ImportState& st) {
  Event e;
  e.kind = EventKind::Supervision;
  e.tool = str_of(data, "decision");
  auto cmd = data.find("command");
  std::string what = cmd != data.end() && cmd->is_array()
                         ? join_argv(*cmd)
                         : str_of(data, "message").substr(0, str_of(data, "message").find('\n'));
  e.text = e.tool + " " + str_of(data, "tool") + " `" + what + "` (call " +
           str_of(data, "tool_call_id") + ")";
  if (e.tool == "denied") e.text += ": " + str_of(data, "reason");
  if (e.tool == "note") e.text += ": " + str_of(data, "text");
  auto prefix = data.find("prefix");
  if (prefix != data.end() && prefix->is_array())
    e.text += " by prefix `" + join_argv(*prefix) + "`";
  st.emit(std::move(e));
}

}  // namespace

void import_kdispatch_record(const nlohmann::json& rec, ImportState& st) {
  std::string type = str_of(rec, "type");
  const nlohmann::json empty = nlohmann::json::object();
  auto it = rec.find("data");
  const nlohmann::json& data = it != rec.end() && it->is_object() ? *it : empty;
  st.ts = str_of(rec, "ts");
  st.role = str_of(rec, "role");
  if (type == records::kHeader) {
    HeaderInfo h;
    h.family = str_of(data, "family");
    h.experiment = str_of(data, "experiment");
    h.worktree = str_of(data, "worktree");
    h.artifact_dir = str_of(data, "artifact_dir");
    h.references = strings_of(data, "reference");
    h.no_peek = strings_of(data, "no_peek");
    st.worktree = h.worktree;
    st.cwd = h.worktree;
    if (st.sink->header) st.sink->header(h);
  } else if (type == records::kResponse) {
    std::string text = str_of(data, "text");
    if (!text.empty()) {
      Event e;
      e.kind = EventKind::ModelText;
      e.text = std::move(text);
      e.tool = records::kResponse;
      st.emit(std::move(e));
    }
  } else if (type == records::kToolCall) {
    tool_call(data, st);
  } else if (type == records::kViolation) {
    Event e;
    e.kind = EventKind::Violation;
    e.tool = str_of(data, "layer");
    e.path = str_of(data, "path");
    e.text = str_of(data, "layer") + " denied " + str_of(data, "op") + " " + str_of(data, "path") +
             " (" + str_of(data, "errno") + ")";
    st.emit(std::move(e));
  } else if (type == records::kDecision) {
    decision(data, st);
  } else if (type == records::kEnd) {
    auto fin = data.find("finish");
    if (fin != data.end() && fin->is_object()) {
      Event e;
      e.kind = EventKind::Finish;
      e.tool = records::kEnd;
      e.text = str_of(*fin, "ledger");
      e.content = fin->dump();
      st.emit(std::move(e));
    }
  } else if (type != records::kRequest && type != records::kToolResult && type != records::kNote) {
    st.unknown(type.empty() ? "record without type" : type);
  }
}

}  // namespace kd::audit
