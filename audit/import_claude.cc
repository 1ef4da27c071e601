// Claude Code session JSONL: assistant tool_use blocks carry the facts; the envelope's cwd is
// where a command ran. Bookkeeping record types are known and skipped.
#include <set>

#include "audit/importer.h"
#include "audit/shell_scan.h"

namespace kd::audit {
namespace {

const std::set<std::string, std::less<>> kBookkeeping = {"user",
                                                         "system",
                                                         "summary",
                                                         "file-history-snapshot",
                                                         "queue-operation",
                                                         "progress",
                                                         "attachment",
                                                         "custom-title",
                                                         "agent-name",
                                                         "ai-title",
                                                         "mode",
                                                         "last-prompt",
                                                         "pr-link"};

void tool_use(const nlohmann::json& block, ImportState& st) {
  std::string name = str_of(block, "name");
  const nlohmann::json empty = nlohmann::json::object();
  auto it = block.find("input");
  const nlohmann::json& in = it != block.end() && it->is_object() ? *it : empty;
  Event e;
  e.tool = name;
  if (name == "Write" || name == "Edit" || name == "MultiEdit" || name == "NotebookEdit") {
    e.kind = EventKind::FileWrite;
    std::string p = str_of(in, name == "NotebookEdit" ? "notebook_path" : "file_path");
    e.path = resolve_path(st.cwd, p);
    if (name == "Write") e.content = str_of(in, "content");
    st.emit(std::move(e));
  } else if (name == "Read" || name == "Glob" || name == "Grep" || name == "LS") {
    std::string p = str_of(in, name == "Read" ? "file_path" : "path");
    if (p.empty()) return;  // a Glob/Grep without a path searches the cwd: nothing specific read
    e.kind = EventKind::FileRead;
    e.path = resolve_path(st.cwd, p);
    st.emit(std::move(e));
  } else if (name == "Bash") {
    e.kind = EventKind::Command;
    e.text = str_of(in, "command");
    std::string text = e.text;
    st.emit(std::move(e));
    scan_shell(text, st.cwd, [&](Event found) { st.emit(std::move(found)); });
  } else if (name == "Task" || name == "Agent") {
    e.kind = EventKind::Subagent;
    e.text = str_of(in, "subagent_type") + ": " + str_of(in, "description");
    st.emit(std::move(e));
  }
}

}  // namespace

bool claude_type_known(std::string_view type) {
  return type == "assistant" || kBookkeeping.count(type) > 0;
}

void import_claude_record(const nlohmann::json& rec, ImportState& st) {
  std::string type = str_of(rec, "type");
  st.ts = str_of(rec, "timestamp");
  st.set_cwd(str_of(rec, "cwd"));
  if (type != "assistant") {
    if (!kBookkeeping.count(type)) st.unknown(type.empty() ? "record without type" : type);
    return;
  }
  auto msg = rec.find("message");
  if (msg == rec.end() || !msg->is_object()) return;
  auto content = msg->find("content");
  if (content == msg->end()) return;
  if (content->is_string()) {
    Event e;
    e.kind = EventKind::ModelText;
    e.tool = "assistant";
    e.text = content->get<std::string>();
    st.emit(std::move(e));
    return;
  }
  if (!content->is_array()) return;
  for (const auto& block : *content) {
    std::string kind = str_of(block, "type");
    if (kind == "text") {
      Event e;
      e.kind = EventKind::ModelText;
      e.tool = "assistant";
      e.text = str_of(block, "text");
      st.emit(std::move(e));
    } else if (kind == "tool_use") {
      tool_use(block, st);
    }
  }
}

}  // namespace kd::audit
