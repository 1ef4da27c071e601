// Codex rollouts ({timestamp,type,payload} envelopes; older generations too) and the
// `codex exec --json` event stream. Results, token counts and display events repeat what the
// calls already say, so only the calls and the assistant's messages become events.
#include <set>

#include "audit/importer.h"
#include "audit/shell_scan.h"

namespace kd::audit {
namespace {

const std::set<std::string, std::less<>> kKnownPayloads = {"function_call_output",
                                                           "custom_tool_call_output",
                                                           "reasoning",
                                                           "web_search_call",
                                                           "ghost_snapshot",
                                                           "compaction",
                                                           "message",
                                                           "function_call",
                                                           "custom_tool_call",
                                                           "local_shell_call"};

void command(const std::string& text, const std::string& workdir, const std::string& tool,
             ImportState& st) {
  Event e;
  e.kind = EventKind::Command;
  e.tool = tool;
  e.text = text;
  e.cwd = workdir.empty() ? st.cwd : resolve_path(st.cwd, workdir);
  std::string cwd = e.cwd;
  st.emit(std::move(e));
  scan_shell(text, cwd, [&](Event found) { st.emit(std::move(found)); });
}

void patch(const std::string& body, ImportState& st) {
  scan_apply_patch(body, st.cwd, [&](Event found) { st.emit(std::move(found)); });
}

void function_call(const nlohmann::json& p, ImportState& st) {
  std::string name = str_of(p, "name");
  std::string raw = str_of(p, "arguments");
  nlohmann::json args = nlohmann::json::parse(raw, nullptr, false);  // a JSON string inside JSON
  if (args.is_discarded() || !args.is_object()) args = nlohmann::json::object();
  std::string workdir = str_of(args, "workdir");
  if (name == "shell" || name == "container.exec") {
    auto cmd = args.find("command");
    if (cmd == args.end()) return;
    if (cmd->is_array() && cmd->size() >= 2 && (*cmd)[0] == "apply_patch" &&
        (*cmd)[1].is_string()) {
      patch((*cmd)[1].get<std::string>(), st);
      return;
    }
    command(join_argv(*cmd), workdir, name, st);
  } else if (name == "shell_command") {
    command(str_of(args, "command"), workdir, name, st);
  } else if (name == "exec_command") {
    command(str_of(args, "cmd"), workdir, name, st);
  } else if (name == "apply_patch") {
    patch(str_of(args, "input"), st);
  } else if (name == "view_image") {
    Event e;
    e.kind = EventKind::FileRead;
    e.tool = name;
    e.path = resolve_path(st.cwd, str_of(args, "path"));
    st.emit(std::move(e));
  } else if (name == "spawn_agent") {
    Event e;
    e.kind = EventKind::Subagent;
    e.tool = name;
    e.text = str_of(args, "agent_type") + str_of(args, "task_name");
    st.emit(std::move(e));
  }
}

void assistant_text(const nlohmann::json& content, ImportState& st) {
  if (!content.is_array()) return;
  for (const auto& part : content) {
    if (str_of(part, "type") != "output_text") continue;
    Event e;
    e.kind = EventKind::ModelText;
    e.tool = "assistant";
    e.text = str_of(part, "text");
    st.emit(std::move(e));
  }
}

void response_item(const nlohmann::json& p, ImportState& st) {
  std::string type = str_of(p, "type");
  if (type == "message") {
    if (str_of(p, "role") == "assistant") assistant_text(p.value("content", nlohmann::json()), st);
  } else if (type == "function_call") {
    function_call(p, st);
  } else if (type == "custom_tool_call") {
    if (str_of(p, "name") == "apply_patch")
      patch(str_of(p, "input"), st);
    else if (str_of(p, "name") == "exec")
      st.unknown("custom_tool_call:exec (code mode, opaque)");
  } else if (type == "local_shell_call") {
    auto action = p.value("action", nlohmann::json::object());
    command(join_argv(action.value("command", nlohmann::json())),
            str_of(action, "working_directory"), "local_shell_call", st);
  } else if (!kKnownPayloads.count(type)) {
    st.unknown("response_item:" + type);
  }
}

}  // namespace

void import_codex_record(const nlohmann::json& rec, ImportState& st) {
  st.ts = str_of(rec, "timestamp");
  std::string type = str_of(rec, "type");
  auto pit = rec.find("payload");
  if (pit == rec.end()) {
    // Older generations: a bare first line {id,timestamp,instructions}, state markers, then
    // bare ResponseItems.
    if (rec.contains("instructions") || rec.contains("record_type")) return;
    if (rec.contains("type"))
      response_item(rec, st);
    else
      st.unknown("record without type");
    return;
  }
  const nlohmann::json& p = *pit;
  if (type == "session_meta" || type == "turn_context") {
    st.set_cwd(str_of(p, "cwd"));
  } else if (type == "response_item") {
    response_item(p, st);
  } else if (type != "event_msg" && type != "compacted" && type != "inter_agent_communication") {
    // event_msg repeats calls for display; compacted re-embeds earlier items: neither is new.
    st.unknown(type.empty() ? "record without type" : type);
  }
}

void import_codex_exec_record(const nlohmann::json& rec, ImportState& st) {
  std::string type = str_of(rec, "type");
  if (type != "item.completed") {
    if (type.rfind("thread.", 0) != 0 && type.rfind("turn.", 0) != 0 && type != "item.started" &&
        type != "item.updated" && type != "error")
      st.unknown(type.empty() ? "record without type" : type);
    return;
  }
  const nlohmann::json item = rec.value("item", nlohmann::json::object());
  std::string kind = str_of(item, "type");
  if (kind == "agent_message") {
    Event e;
    e.kind = EventKind::ModelText;
    e.tool = "agent_message";
    e.text = str_of(item, "text");
    st.emit(std::move(e));
  } else if (kind == "command_execution") {
    command(str_of(item, "command"), "", kind, st);  // the exec stream records no cwd
  } else if (kind == "file_change") {
    for (const auto& change : item.value("changes", nlohmann::json::array())) {
      Event e;
      e.kind = EventKind::FileWrite;
      e.tool = "file_change";
      e.path = resolve_path(st.cwd, str_of(change, "path"));
      st.emit(std::move(e));
    }
  } else if (kind == "collab_tool_call") {
    Event e;
    e.kind = EventKind::Subagent;
    e.tool = kind;
    e.text = str_of(item, "tool");
    st.emit(std::move(e));
  } else if (kind != "reasoning" && kind != "plan" && kind != "mcp_tool_call" &&
             kind != "web_search" && kind != "todo_list" && kind != "error") {
    st.unknown("item:" + kind);
  }
}

}  // namespace kd::audit
