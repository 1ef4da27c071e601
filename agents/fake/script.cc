#include "agents/fake/script.h"

#include <algorithm>

#include "common/errors.h"
#include "common/files.h"
#include "common/json_read.h"

namespace kd::agents {
namespace {

using json = nlohmann::json;

// Refuses a field the script format does not have, naming those it has.
void only_fields(const JsonObjectReader& r, std::initializer_list<std::string_view> fields) {
  std::optional<std::string> unknown = r.first_unknown(fields);
  if (!unknown) return;
  std::vector<std::string_view> known(fields);
  std::sort(known.begin(), known.end());
  std::string list;
  for (std::string_view k : known)
    list += (list.empty() ? "" : ", ") + std::string(k);
  r.error("unknown field \"" + *unknown + "\" (fields: " + list + ")");
}

// What an optional field must be, as its error says it: "<field> must be <says>".
struct Rule {
  bool (*ok)(const json&);
  const char* says;
};
const Rule kString{[](const json& v) { return v.is_string(); }, "a string"};
const Rule kBoolean{[](const json& v) { return v.is_boolean(); }, "true or false"};
const Rule kCount{[](const json& v) { return v.is_number_integer() && v >= 0; },
                  "a non-negative integer"};
const Rule kAmount{[](const json& v) { return v.is_number() && v >= 0; }, "a non-negative number"};
const Rule kSeconds{kAmount.ok, "a non-negative number of seconds"};

template <class T>
T field_or(const JsonObjectReader& r, const std::string& key, const Rule& rule, T fallback) {
  if (!r.has(key)) return fallback;
  const json& v = r.at(key);
  if (!rule.ok(v)) r.error(key + " must be " + rule.says);
  return v.get<T>();
}

// A reader for a member that must be an object, or the script's own message naming it.
JsonObjectReader object_or(const json& v, const std::string& where, const std::string& message) {
  if (!v.is_object()) throw Error(where + ": " + message);
  return JsonObjectReader(v, where);
}

FaultKind fault_kind(const JsonObjectReader& f) {
  static const std::pair<const char*, FaultKind> kinds[] = {
      {"status", FaultKind::Status},
      {"error_event", FaultKind::ErrorEvent},
      {"stall", FaultKind::Stall},
      {"truncate", FaultKind::Truncate},
      {"malformed_json", FaultKind::MalformedJson}};
  const std::string name = f.at("kind").get<std::string>();
  for (const auto& [text, kind] : kinds)
    if (name == text) return kind;
  f.error("kind \"" + name +
          "\" is not one of status, error_event, stall, truncate, malformed_json");
}

FakeFault parse_fault(const json& v, const std::string& where) {
  if (!v.is_object() || !v.contains("kind") || !v["kind"].is_string())
    throw Error(where + ": a fault is an object with a string \"kind\"");
  JsonObjectReader f(v, where);
  only_fields(f, {"kind", "status", "retry_after", "error_type", "after_events", "seconds"});
  FakeFault out;
  out.kind = fault_kind(f);
  if (out.kind == FaultKind::Status) {
    const json* s = f.has("status") ? &f.at("status") : nullptr;
    if (!s || !s->is_number_integer() || *s < 400 || *s > 599)
      f.error("a status fault needs \"status\" between 400 and 599");
    out.status = s->get<int>();
  }
  if (f.has("retry_after")) out.retry_after_s = field_or(f, "retry_after", kSeconds, 0.0);
  out.error_type = field_or(f, "error_type", kString, out.error_type);
  out.after_events = field_or(f, "after_events", kCount, out.after_events);
  if (out.kind == FaultKind::Stall) {
    const json* s = f.has("seconds") ? &f.at("seconds") : nullptr;
    if (!s || !s->is_number() || *s <= 0) f.error("a stall needs \"seconds\" > 0");
    out.seconds = s->get<double>();
  }
  return out;
}

FakeToolCall parse_tool_call(const json& v, const std::string& where, size_t turn, size_t k) {
  if (!v.is_object() || !v.contains("name") || !v["name"].is_string())
    throw Error(where + ": a tool call needs a string \"name\"");
  JsonObjectReader c(v, where);
  only_fields(c, {"id", "name", "input", "arguments_raw"});
  FakeToolCall fc;
  fc.name = c.at("name").get<std::string>();
  fc.id = c.has("id") && c.at("id").is_string()
              ? c.at("id").get<std::string>()
              : "call_" + std::to_string(turn) + "_" + std::to_string(k);
  if (c.has("arguments_raw")) {
    fc.arguments_raw = field_or(c, "arguments_raw", kString, std::string());
  } else {
    fc.input = c.has("input") ? c.at("input") : json::object();
    if (!fc.input.is_object()) c.error("input must be an object");
  }
  return fc;
}

// One string is streamed in pieces cut after interpolation; a list gives the pieces.
void parse_text(const JsonObjectReader& t, FakeTurn& turn) {
  if (!t.has("text")) return;
  const json& text = t.at("text");
  if (text.is_string()) {
    turn.text_chunks.push_back(text.get<std::string>());
    turn.split_text = true;
  } else if (text.is_array()) {
    for (const auto& c : text) {
      if (!c.is_string()) t.error("text pieces must be strings");
      turn.text_chunks.push_back(c.get<std::string>());
    }
  } else {
    t.error("text must be a string or an array of string pieces");
  }
}

// The elements of an optional array member, or the script's message for a non-array.
const json& array_or_empty(const JsonObjectReader& r, const std::string& key) {
  static const json empty = json::array();
  if (!r.has(key)) return empty;
  if (!r.at(key).is_array()) r.error(key + " must be an array");
  return r.at(key);
}

FakeTurn parse_turn(const json& v, const std::string& where, size_t i) {
  JsonObjectReader t = object_or(v, where, "a turn is an object");
  only_fields(t, {"text", "tool_calls", "stop_reason", "usage", "noise", "faults", "comment"});
  FakeTurn turn;
  parse_text(t, turn);
  const json& calls = array_or_empty(t, "tool_calls");
  for (size_t k = 0; k < calls.size(); ++k) {
    turn.tool_calls.push_back(
        parse_tool_call(calls[k], where + ".tool_calls[" + std::to_string(k) + "]", i, k));
  }
  turn.stop_reason = field_or(t, "stop_reason", kString, turn.stop_reason);
  if (t.has("usage")) {
    JsonObjectReader u = object_or(t.at("usage"), where, "usage must be an object");
    turn.input_tokens = u.raw().value("input_tokens", turn.input_tokens);
    turn.output_tokens = u.raw().value("output_tokens", turn.output_tokens);
  }
  turn.noise = field_or(t, "noise", kBoolean, turn.noise);
  const json& faults = array_or_empty(t, "faults");
  for (size_t k = 0; k < faults.size(); ++k)
    turn.faults.push_back(parse_fault(faults[k], where + ".faults[" + std::to_string(k) + "]"));
  if (turn.text_chunks.empty() && turn.tool_calls.empty())
    t.error("a turn needs text or tool_calls");
  return turn;
}

}  // namespace

FakeScript FakeScript::parse(std::string_view text, const std::string& source) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw Error(source + ": not a JSON object");
  JsonObjectReader r(j, source);
  only_fields(r, {"model", "chunk_bytes", "pace_ms", "turns", "comment", "emulate"});
  FakeScript s;
  if (r.has("emulate")) {
    if (!r.at("emulate").is_object()) r.error("\"emulate\" must be an object");
    JsonObjectReader e(r.at("emulate"), source + ": emulate");
    only_fields(e, {"cache", "cache_min_tokens", "context_window", "requests_per_s", "burst",
                    "input_tokens_per_s", "count_tokens"});
    FakeEmulation& m = s.emulate;
    m.cache = field_or(e, "cache", kBoolean, m.cache);
    m.count_tokens = field_or(e, "count_tokens", kBoolean, m.count_tokens);
    m.cache_min_tokens = field_or(e, "cache_min_tokens", kCount, m.cache_min_tokens);
    m.context_window = field_or(e, "context_window", kCount, m.context_window);
    m.requests_per_s = field_or(e, "requests_per_s", kAmount, m.requests_per_s);
    m.burst = field_or(e, "burst", kCount, m.burst);
    m.input_tokens_per_s = field_or(e, "input_tokens_per_s", kAmount, m.input_tokens_per_s);
  }
  s.model = field_or(r, "model", kString, s.model);
  s.chunk_bytes = field_or(r, "chunk_bytes", kCount, s.chunk_bytes);
  s.pace_ms = field_or(r, "pace_ms", kAmount, s.pace_ms);
  if (!r.has("turns") || !r.at("turns").is_array() || r.at("turns").empty())
    r.error("\"turns\" must be a non-empty array");
  const json& turns = r.at("turns");
  for (size_t i = 0; i < turns.size(); ++i)
    s.turns.push_back(parse_turn(turns[i], source + ": turns[" + std::to_string(i) + "]", i));
  return s;
}

FakeScript FakeScript::load(const std::filesystem::path& path) {
  return parse(read_file(path), path.string());
}

}  // namespace kd::agents
