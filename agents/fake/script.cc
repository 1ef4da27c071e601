#include "agents/fake/script.h"

#include <set>

#include "common/errors.h"
#include "common/files.h"

namespace kd::agents {
namespace {

using json = nlohmann::json;

[[noreturn]] void bad(const std::string& where, const std::string& what) {
  throw Error(where + ": " + what);
}

void only_keys(const json& o, const std::set<std::string>& keys, const std::string& where) {
  for (auto& [k, v] : o.items()) {
    if (!keys.count(k)) {
      std::string known;
      for (const auto& s : keys)
        known += (known.empty() ? "" : ", ") + s;
      bad(where, "unknown field \"" + k + "\" (fields: " + known + ")");
    }
  }
}

FaultKind fault_kind(const std::string& name, const std::string& where) {
  static const std::pair<const char*, FaultKind> kinds[] = {
      {"status", FaultKind::Status},
      {"error_event", FaultKind::ErrorEvent},
      {"stall", FaultKind::Stall},
      {"truncate", FaultKind::Truncate},
      {"malformed_json", FaultKind::MalformedJson}};
  for (const auto& [text, kind] : kinds)
    if (name == text) return kind;
  bad(where,
      "kind \"" + name + "\" is not one of status, error_event, stall, truncate, malformed_json");
}

FakeFault parse_fault(const json& f, const std::string& where) {
  if (!f.is_object() || !f.contains("kind") || !f["kind"].is_string())
    bad(where, "a fault is an object with a string \"kind\"");
  only_keys(f, {"kind", "status", "retry_after", "error_type", "after_events", "seconds"}, where);
  FakeFault out;
  out.kind = fault_kind(f["kind"], where);
  if (out.kind == FaultKind::Status) {
    if (!f.contains("status") || !f["status"].is_number_integer() || f["status"] < 400 ||
        f["status"] > 599) {
      bad(where, "a status fault needs \"status\" between 400 and 599");
    }
    out.status = f["status"];
  }
  if (f.contains("retry_after")) {
    if (!f["retry_after"].is_number() || f["retry_after"] < 0)
      bad(where, "retry_after must be a non-negative number of seconds");
    out.retry_after_s = f["retry_after"].get<double>();
  }
  if (f.contains("error_type")) {
    if (!f["error_type"].is_string()) bad(where, "error_type must be a string");
    out.error_type = f["error_type"];
  }
  if (f.contains("after_events")) {
    if (!f["after_events"].is_number_integer() || f["after_events"] < 0)
      bad(where, "after_events must be a non-negative integer");
    out.after_events = f["after_events"];
  }
  if (out.kind == FaultKind::Stall) {
    if (!f.contains("seconds") || !f["seconds"].is_number() || f["seconds"] <= 0)
      bad(where, "a stall needs \"seconds\" > 0");
    out.seconds = f["seconds"];
  }
  return out;
}

}  // namespace

FakeScript FakeScript::parse(std::string_view text, const std::string& source) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) bad(source, "not a JSON object");
  only_keys(j, {"model", "chunk_bytes", "pace_ms", "turns", "comment"}, source);
  FakeScript s;
  if (j.contains("model")) {
    if (!j["model"].is_string()) bad(source, "model must be a string");
    s.model = j["model"];
  }
  if (j.contains("chunk_bytes")) {
    if (!j["chunk_bytes"].is_number_integer() || j["chunk_bytes"] < 0)
      bad(source, "chunk_bytes must be a non-negative integer");
    s.chunk_bytes = j["chunk_bytes"];
  }
  if (j.contains("pace_ms")) {
    if (!j["pace_ms"].is_number() || j["pace_ms"] < 0)
      bad(source, "pace_ms must be a non-negative number");
    s.pace_ms = j["pace_ms"];
  }
  if (!j.contains("turns") || !j["turns"].is_array() || j["turns"].empty())
    bad(source, "\"turns\" must be a non-empty array");
  for (size_t i = 0; i < j["turns"].size(); ++i) {
    const json& t = j["turns"][i];
    std::string where = source + ": turns[" + std::to_string(i) + "]";
    if (!t.is_object()) bad(where, "a turn is an object");
    only_keys(t, {"text", "tool_calls", "stop_reason", "usage", "noise", "faults", "comment"},
              where);
    FakeTurn turn;
    if (t.contains("text")) {
      if (t["text"].is_string()) {
        turn.text_chunks.push_back(t["text"]);
        turn.split_text = true;
      } else if (t["text"].is_array()) {
        for (const auto& c : t["text"]) {
          if (!c.is_string()) bad(where, "text pieces must be strings");
          turn.text_chunks.push_back(c);
        }
      } else {
        bad(where, "text must be a string or an array of string pieces");
      }
    }
    if (t.contains("tool_calls")) {
      if (!t["tool_calls"].is_array()) bad(where, "tool_calls must be an array");
      for (size_t k = 0; k < t["tool_calls"].size(); ++k) {
        const json& c = t["tool_calls"][k];
        std::string cw = where + ".tool_calls[" + std::to_string(k) + "]";
        if (!c.is_object() || !c.contains("name") || !c["name"].is_string())
          bad(cw, "a tool call needs a string \"name\"");
        only_keys(c, {"id", "name", "input", "arguments_raw"}, cw);
        FakeToolCall fc;
        fc.name = c["name"];
        fc.id = c.contains("id") && c["id"].is_string()
                    ? c["id"].get<std::string>()
                    : "call_" + std::to_string(i) + "_" + std::to_string(k);
        if (c.contains("arguments_raw")) {
          if (!c["arguments_raw"].is_string()) bad(cw, "arguments_raw must be a string");
          fc.arguments_raw = c["arguments_raw"].get<std::string>();
        } else {
          fc.input = c.value("input", json::object());
          if (!fc.input.is_object()) bad(cw, "input must be an object");
        }
        turn.tool_calls.push_back(std::move(fc));
      }
    }
    if (t.contains("stop_reason")) {
      if (!t["stop_reason"].is_string()) bad(where, "stop_reason must be a string");
      turn.stop_reason = t["stop_reason"];
    }
    if (t.contains("usage")) {
      const json& u = t["usage"];
      if (!u.is_object()) bad(where, "usage must be an object");
      turn.input_tokens = u.value("input_tokens", turn.input_tokens);
      turn.output_tokens = u.value("output_tokens", turn.output_tokens);
    }
    if (t.contains("noise")) {
      if (!t["noise"].is_boolean()) bad(where, "noise must be true or false");
      turn.noise = t["noise"];
    }
    if (t.contains("faults")) {
      if (!t["faults"].is_array()) bad(where, "faults must be an array");
      for (size_t k = 0; k < t["faults"].size(); ++k) {
        turn.faults.push_back(
            parse_fault(t["faults"][k], where + ".faults[" + std::to_string(k) + "]"));
      }
    }
    if (turn.text_chunks.empty() && turn.tool_calls.empty())
      bad(where, "a turn needs text or tool_calls");
    s.turns.push_back(std::move(turn));
  }
  return s;
}

FakeScript FakeScript::load(const std::filesystem::path& path) {
  return parse(read_file(path), path.string());
}

}  // namespace kd::agents
