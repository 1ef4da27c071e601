#include "agents/tools.h"

namespace kd::agents {
namespace {

using json = nlohmann::json;

json str(const char* description) {
  return {{"type", "string"}, {"description", description}, {"minLength", 1}};
}

json object(json properties, std::vector<std::string> required) {
  return {{"type", "object"},
          {"properties", std::move(properties)},
          {"required", std::move(required)},
          {"additionalProperties", false}};
}

std::vector<ToolSpec> build() {
  json command = {{"type", "array"},
                  {"items", {{"type", "string"}}},
                  {"minItems", 1},
                  {"description",
                   "argv: program then arguments; no shell unless you call one (e.g. [\"bash\", "
                   "\"-lc\", \"...\"])"}};
  json timeout = {{"type", "integer"},
                  {"minimum", 1},
                  {"maximum", 3600},
                  {"description", "wall-clock limit in seconds (default 600)"}};
  json cwd = {
      {"type", "string"},
      {"description", "working directory relative to the work dir (default: the work dir)"}};
  return {
      {"read_file",
       "Read a text file. Paths are relative to the work dir (absolute paths inside it are "
       "accepted). "
       "No-peek paths and anything outside the readable tree are refused.",
       object({{"path", str("file to read")},
               {"offset",
                {{"type", "integer"}, {"minimum", 0}, {"description", "byte offset to start at"}}},
               {"limit",
                {{"type", "integer"}, {"minimum", 1}, {"description", "maximum bytes to return"}}}},
              {"path"})},
      {"list_dir", "List a directory's entries (name, type, size).",
       object({{"path", str("directory to list; \".\" is the work dir")}}, {"path"})},
      {"write_file",
       "Create or replace a file inside the work dir with the given content. The reference module "
       "and "
       "anything outside the work dir cannot be written.",
       object({{"path", str("file to write")},
               {"content", {{"type", "string"}, {"description", "the whole new content"}}}},
              {"path", "content"})},
      {"edit_file",
       "Replace one exact occurrence of old_text with new_text in a file inside the work dir. "
       "old_text must "
       "occur exactly once (add surrounding lines to make it unique).",
       object({{"path", str("file to edit")},
               {"old_text", str("text to find; must occur exactly once")},
               {"new_text", {{"type", "string"}, {"description", "replacement text"}}}},
              {"path", "old_text", "new_text"})},
      {"run",
       "Run a command in the sandbox without the chip (CPU only: interpret-mode parity, lint, unit "
       "tests). "
       "Returns exit code, stdout and stderr.",
       object({{"command", command}, {"cwd", cwd}, {"timeout_s", timeout}}, {"command"})},
      {"run_on_chip",
       "Run a command with the assigned chip visible, holding the chip lock for this call only. "
       "Use it for "
       "on-device parity and author-side timing; save kgate receipts under the artifact dir.",
       object({{"command", command}, {"cwd", cwd}, {"timeout_s", timeout}}, {"command"})},
      {"git_diff", "Show the uncommitted changes of the work dir, or of one path.",
       object({{"path", {{"type", "string"}, {"description", "limit the diff to this path"}}}},
              {})},
      {"commit",
       "Commit the listed files (or all changes) of the work dir: one commit per candidate that "
       "ran on the chip. "
       "The message subject must match cand<N>(<family> v<NNN>): <what> — <result>. Returns the "
       "commit SHA.",
       object({{"message", str("commit message; subject line in the grammar above")},
               {"paths",
                {{"type", "array"},
                 {"items", {{"type", "string"}}},
                 {"description", "files to include; all changes when omitted"}}}},
              {"message"})},
      {"finish",
       "End the authoring phase with the output contract. Rejected with the list of problems when "
       "the ledger "
       "is malformed or the candidate plan is not covered; fix them and call finish again.",
       object({{"ledger",
                str("the candidate ledger: first line `loaded: [<sections read>]`, then the table "
                    "| candidate | class | committed SHA | parity (max abs / max rel) | p50 ms "
                    "(author-side) | vs naive "
                    "| receipt | why kept/rejected | with one row per attempt, failures included")},
               {"final_candidate",
                object({{"path", str("path of the final candidate under the work dir")},
                        {"sha", str("its commit SHA (40 hex digits)")}},
                       {"path", "sha"})},
               {"mechanism", str("one paragraph: what the final candidate does differently and why "
                                 "that attacks the "
                                 "diagnosed bound; only mechanisms actually implemented")},
               {"escalations",
                {{"type", "array"},
                 {"items", object({{"what", str("escalation or knowledge purchase")},
                                   {"why", str("reason")},
                                   {"minutes", {{"type", "number"}, {"minimum", 0}}}},
                                  {"what", "why", "minutes"})},
                 {"description", "escalations and knowledge purchases; [] when none"}}},
               {"blockers",
                {{"type", "array"},
                 {"items", {{"type", "string"}}},
                 {"description",
                  "what the stop rule cut off, discrepancies with the diagnosis; [] when none"}}},
               {"abandoned",
                {{"type", "array"},
                 {"items", object({{"candidate", str("plan item id, candN")},
                                   {"reason", str("why it was not run")}},
                                  {"candidate", "reason"})},
                 {"description", "plan items not run, each with its reason"}}},
               {"compliance",
                {{"type", "string"},
                 {"description",
                  "confirmation that each activity constraint (e.g. no-peek) was obeyed; "
                  "empty when the activity carried none"}}}},
              {"ledger", "final_candidate", "mechanism", "escalations", "blockers", "compliance"})},
  };
}

std::string type_name(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "integer";
    case json::value_t::number_float:
      return "number";
    case json::value_t::string:
      return "string";
    case json::value_t::array:
      return "array";
    case json::value_t::object:
      return "object";
    default:
      return "value";
  }
}

bool type_ok(const std::string& want, const json& v) {
  if (want == "string") return v.is_string();
  if (want == "integer") return v.is_number_integer();
  if (want == "number") return v.is_number();
  if (want == "boolean") return v.is_boolean();
  if (want == "array") return v.is_array();
  if (want == "object") return v.is_object();
  return true;
}

void check(const json& schema, const json& v, const std::string& at,
           std::vector<std::string>& errs) {
  std::string want = schema.value("type", "");
  if (!want.empty() && !type_ok(want, v)) {
    errs.push_back(at + " must be " +
                   (want == "array" || want == "object" || want == "integer" ? "an " : "a ") +
                   want + ", got " + type_name(v));
    return;
  }
  if (v.is_string() && schema.contains("minLength") &&
      v.get_ref<const std::string&>().size() < schema["minLength"].get<size_t>()) {
    errs.push_back(at + " must not be empty");
  }
  if (v.is_number()) {
    if (schema.contains("minimum") && v.get<double>() < schema["minimum"].get<double>()) {
      errs.push_back(at + " must be at least " + schema["minimum"].dump());
    }
    if (schema.contains("maximum") && v.get<double>() > schema["maximum"].get<double>()) {
      errs.push_back(at + " must be at most " + schema["maximum"].dump());
    }
  }
  if (v.is_array()) {
    if (schema.contains("minItems") && v.size() < schema["minItems"].get<size_t>()) {
      errs.push_back(at + " needs at least " + schema["minItems"].dump() + " item(s)");
    }
    if (schema.contains("items")) {
      for (size_t i = 0; i < v.size(); ++i)
        check(schema["items"], v[i], at + "[" + std::to_string(i) + "]", errs);
    }
  }
  if (v.is_object() && schema.contains("properties")) {
    const json& props = schema["properties"];
    for (const auto& r : schema.value("required", json::array())) {
      if (!v.contains(r.get<std::string>()))
        errs.push_back(at + (at.empty() ? "" : ".") + r.get<std::string>() + " is required");
    }
    for (auto& [k, val] : v.items()) {
      std::string where = at + (at.empty() ? "" : ".") + k;
      if (!props.contains(k)) {
        if (schema.value("additionalProperties", true) == false) {
          std::string known;
          for (auto& [pk, pv] : props.items())
            known += (known.empty() ? "" : ", ") + pk;
          errs.push_back(where + " is not an argument of this tool (arguments: " + known + ")");
        }
        continue;
      }
      check(props[k], val, where, errs);
    }
  }
}

}  // namespace

const std::vector<ToolSpec>& author_tools() {
  static const std::vector<ToolSpec> tools = build();
  return tools;
}

const std::vector<ToolSpec>& verifier_tools() {
  static const std::vector<ToolSpec> tools = [] {
    std::vector<ToolSpec> v;
    for (const auto& t : author_tools()) {
      if (t.name == "read_file" || t.name == "list_dir") v.push_back(t);
    }
    v.push_back(
        {"finish",
         "Return your report: the four sections of the verifier's output contract, as markdown "
         "bodies without their headings. Quote only numbers that appear in the receipt; the "
         "HLO Dump section carries the firing audit line. Rejected with what to fix.",
         object({{"independent_measurements",
                  str("metric x naive x candidate x delta from the receipt, parity, "
                      "REPRODUCTION: MATCHES|DIVERGES, chip and iteration count")},
                 {"profile", str("trace location and findings, or why none was captured")},
                 {"hlo_dump",
                  str("dump locations and the line `Hypothesis-firing audit: HYPOTHESIS FIRING "
                      "CONFIRMED|SILENT NO-OP DETECTED|PARTIAL — <evidence>`")},
                 {"headroom_leads",
                  str("0-3 one-line leads tagged [static] or [measured], or `No LLO-visible "
                      "headroom at this op-point.`, then the `LLO-informed decision potential:` "
                      "line")}},
                {"independent_measurements", "profile", "hlo_dump", "headroom_leads"})});
    return v;
  }();
  return tools;
}

const ToolSpec* find_tool(const std::vector<ToolSpec>& tools, const std::string& name) {
  for (const auto& t : tools) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

std::optional<std::string> validate_call(const std::vector<ToolSpec>& tools, const ToolCall& call) {
  const ToolSpec* spec = find_tool(tools, call.name);
  if (!spec) {
    std::string known;
    for (const auto& t : tools)
      known += (known.empty() ? "" : ", ") + t.name;
    return "unknown tool " + call.name + "; the tools are: " + known;
  }
  if (!call.input_is_json) {
    return "the arguments of " + call.name +
           " are not a JSON object: " + call.input_raw.substr(0, 200) +
           " — send the arguments as one JSON object matching the tool's schema";
  }
  std::vector<std::string> errs;
  check(spec->input_schema, call.input, "", errs);
  if (errs.empty()) return std::nullopt;
  std::string msg = "invalid arguments for " + call.name + ":";
  for (const auto& e : errs)
    msg += "\n- " + e;
  return msg;
}

}  // namespace kd::agents
