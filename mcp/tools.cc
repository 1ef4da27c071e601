#include "mcp/tools.h"

#include <sstream>

#include "audit/auditor.h"
#include "audit/policy.h"
#include "audit/report.h"
#include "audit/wiki_context.h"
#include "briefs/brief.h"
#include "briefs/queue.h"
#include "common/errors.h"
#include "common/files.h"
#include "common/policy_path.h"
#include "contract/transcript_records.h"
#include "contract/wiki_layout.h"

namespace kd::mcp {

namespace fs = std::filesystem;
using json = nlohmann::json;
namespace records = contract::transcript;

namespace {

json str(const std::string& description) {
  return {{"type", "string"}, {"description", description}, {"minLength", 1}};
}

const json kFamily = {
    {"type", "string"}, {"description", "the family slug, e.g. rms-norm"}, {"minLength", 1}};
const json kExperiment = {
    {"type", "string"}, {"description", "the experiment, vNNN"}, {"minLength", 4}};
const json kRunId = str("a run id returned by dispatch");

json object_schema(json properties, json required) {
  return {{"type", "object"},
          {"properties", std::move(properties)},
          {"required", std::move(required)},
          {"additionalProperties", false}};
}

// The status object every run tool answers with.
const json kStatusSchema = {
    {"type", "object"},
    {"properties",
     {{"run_id", {{"type", "string"}}},
      {"family", {{"type", "string"}}},
      {"experiment", {{"type", "string"}}},
      {"state",
       {{"type", "string"},
        {"enum",
         {"authoring", "awaiting_approval", "verifying", "done", "error", "stopped", "failed",
          "cancelled", "ended"}}}},
      {"phase", {{"type", "string"}}},
      {"supervised", {{"type", "boolean"}}},
      {"pending", {{"type", "integer"}, {"description", "requests awaiting a decision"}}},
      {"turns", {{"type", "integer"}}},
      {"cost_usd", {{"type", "number"}}},
      {"verdict", {{"type", "string"}}},
      {"exit_code", {{"type", "integer"}}},
      {"error",
       {{"type", "object"},
        {"properties", {{"cause", {{"type", "string"}}}, {"message", {{"type", "string"}}}}}}}}},
    {"required", {"run_id", "state", "phase", "turns", "cost_usd"}}};

fs::path wiki_of(ToolEnv& env, const json& args) {
  if (args.contains("wiki")) return args["wiki"].get<std::string>();
  if (env.default_wiki.empty())
    throw ToolFailure{"\"wiki\" is required: the server was started without --wiki"};
  return env.default_wiki;
}

void check_names(const std::string& family, const std::string& experiment) {
  if (!contract::is_family_slug(family))
    throw ToolFailure{"\"family\" must be a slug of [a-z0-9-], got " + quote(family)};
  if (!contract::is_experiment_name(experiment))
    throw ToolFailure{"\"experiment\" must look like v001, got " + quote(experiment)};
}

json run_brief(ToolEnv& env, const json& args, CallContext&) {
  briefs::BriefRequest req;
  req.wiki = wiki_of(env, args);
  req.family = args["family"];
  req.experiment = args["experiment"];
  check_names(req.family, req.experiment);
  if (args.contains("chips")) req.chips = args["chips"].get<std::string>();
  briefs::BriefOutcome outcome = briefs::build_brief(req);
  if (!outcome.brief)
    throw ToolFailure{briefs::render_problems(outcome.problems) +
                      briefs::problems_json(outcome.problems).dump()};
  return {{"family", req.family},
          {"experiment", req.experiment},
          {"sha256", outcome.brief->sha256()},
          {"branch", outcome.brief->branch},
          {"warnings", outcome.brief->warnings},
          {"markdown", outcome.brief->markdown()}};
}

json run_dispatch(ToolEnv& env, const json& args, CallContext&) {
  DispatchSpec spec;
  spec.wiki = wiki_of(env, args);
  spec.family = args["family"];
  spec.experiment = args["experiment"];
  check_names(spec.family, spec.experiment);
  // `kdispatch run` takes the family's queue; the experiment named must be what it would run.
  std::vector<std::string> queued;
  for (const auto& q : briefs::in_progress_experiments(spec.wiki, {spec.family})) {
    if (!q.problem.empty()) throw ToolFailure{q.page + ": " + q.problem};
    queued.push_back(q.experiment);
  }
  if (queued.empty() || queued.front() != spec.experiment)
    throw ToolFailure{spec.family + "/" + spec.experiment +
                      " is not the next committed in_progress experiment of its family (queued: " +
                      (queued.empty() ? std::string("none") : json(queued).dump()) + ")"};
  if (queued.size() > 1)
    throw ToolFailure{"family " + spec.family + " has " + std::to_string(queued.size()) +
                      " in_progress experiments; dispatch runs one at a time"};
  auto opt = [&](const char* name, const char* flag) {
    if (!args.contains(name)) return;
    const json& v = args[name];
    spec.run_args.push_back(flag);
    spec.run_args.push_back(v.is_string() ? v.get<std::string>() : v.dump());
  };
  opt("provider", "--provider");
  opt("model", "--model");
  opt("base_url", "--base-url");
  opt("script", "--script");
  opt("max_turns", "--max-turns");
  opt("max_cost_usd", "--max-cost");
  opt("chips", "--chips");
  opt("verify_cmd", "--verify-cmd");
  opt("mode", "--mode");
  for (const auto& d : args.value("tool_dirs", json::array())) {
    spec.run_args.push_back("--tool-dir");
    spec.run_args.push_back(d.get<std::string>());
  }
  spec.supervise = args.value("supervise", false);
  return env.runs.dispatch(spec);
}

json run_status(ToolEnv& env, const json& args, CallContext&) {
  if (args.contains("run_id")) return env.runs.status(args["run_id"]);
  return {{"runs", env.runs.status_all()}};
}

json run_wait(ToolEnv& env, const json& args, CallContext& call) {
  const double timeout = args.value("timeout_s", 45.0);
  call.progress(0, timeout, "waiting");
  json r = env.runs.wait(args["run_id"], timeout, call.wake_fd, [&](const json& s, double t) {
    call.progress(
        t, timeout,
        s.value("state", "") + ", " + s.value("phase", "") + ", turn " + s["turns"].dump());
  });
  json out = r["status"];
  out["changed"] = r["changed"];
  return out;
}

json run_pending(ToolEnv& env, const json& args, CallContext&) {
  return env.runs.pending(args["run_id"]);
}

json run_decide(ToolEnv& env, const json& args, CallContext&) {
  json answer = {{"decision", args["decision"]}};
  for (const char* key : {"reason", "prefix_words", "notes"})
    if (args.contains(key)) answer[key] = args[key];
  return env.runs.decide(args["run_id"], args["call_id"], answer);
}

json run_cancel(ToolEnv& env, const json& args, CallContext&) {
  return env.runs.cancel(args["run_id"]);
}

json run_outcome(ToolEnv& env, const json& args, CallContext&) {
  const std::string id = args["run_id"];
  fs::path dir = env.runs.experiment_dir(id);
  if (!fs::is_regular_file(dir / "outcome.json")) {
    json s = env.runs.status(id);
    throw ToolFailure{"run " + id + " has no outcome yet (state " + s["state"].get<std::string>() +
                      ", phase " + s["phase"].get<std::string>() + ")"};
  }
  json outcome = json::parse(read_file(dir / "outcome.json"));
  json out = {{"run_id", id}, {"outcome", outcome}};
  if (outcome.contains("verdict")) out["verdict"] = outcome["verdict"];
  if (fs::is_regular_file(dir / "filing.md")) out["filing"] = read_file(dir / "filing.md");
  return out;
}

json run_audit_tool(ToolEnv& env, const json& args, CallContext&) {
  const std::string id = args["run_id"];
  json rec = env.runs.dispatch_record(id);
  fs::path dir = env.runs.experiment_dir(id);
  audit::AuditContext ctx =
      audit::context_from_wiki(rec["wiki"].get<std::string>(), rec["family"], rec["experiment"]);
  audit::AuditReport report =
      audit::run_audit({dir}, ctx, audit::load_audit_policy(policy_file("audit.json")));
  return {{"run_id", id},
          {"exit_status", audit::audit_exit_status(report)},
          {"report", json::parse(audit::render_json(report))}};
}

std::string clip(std::string s, size_t max) {
  if (s.size() > max) s = s.substr(0, max) + " ...(" + std::to_string(s.size() - max) + " more)";
  return s;
}

// One transcript record as a line a person or a model reads.
std::string render_record(const json& r) {
  const std::string type = r.value("type", "?");
  const json& d = r.value("data", json::object());
  auto text = [&](const char* key) {
    return d.contains(key) && d[key].is_string() ? d[key].get<std::string>()
                                                 : d.value(key, json()).dump();
  };
  std::string line = "#" + r.value("seq", json()).dump() + " " + type + ": ";
  if (type == records::kResponse) return line + clip(text("text"), 2000);
  if (type == records::kToolCall)
    return line + d.value("name", "") + " " + clip(d.value("input", json()).dump(), 1000);
  if (type == records::kToolResult)
    return line + d.value("name", "") + (d.value("is_error", false) ? " (error) " : " ") +
           clip(text("content"), 1000);
  if (type == records::kNote) return line + clip(text("text"), 1000);
  if (type == records::kDecision)
    return line + d.value("decision", "") + " " + d.value("tool", "") + " " +
           clip(d.value("command", d.value("message", json())).dump(), 500) +
           (d.contains("reason") ? ": " + text("reason") : "") +
           (d.contains("text") ? ": " + text("text") : "");
  if (type == records::kRequest) return line + "(request to the provider)";
  return line + clip(d.dump(), 1000);
}

json run_transcript(ToolEnv& env, const json& args, CallContext&) {
  const std::string id = args["run_id"], role = args.value("role", "author");
  fs::path file = env.runs.experiment_dir(id) / role / "transcript.jsonl";
  if (!fs::is_regular_file(file))
    throw ToolFailure{"run " + id + " has no " + role + " transcript yet"};
  const size_t offset = args.value("offset", 0), limit = args.value("limit", 50);
  std::istringstream in(read_file(file));
  json lines = json::array();
  size_t total = 0;
  for (std::string line; std::getline(in, line); ++total) {
    if (total < offset || total >= offset + limit) continue;
    json r = json::parse(line, nullptr, false);
    lines.push_back(r.is_object() ? render_record(r) : "(unreadable line)");
  }
  json out = {
      {"run_id", id}, {"role", role}, {"offset", offset}, {"total", total}, {"lines", lines}};
  if (offset + limit < total) out["next_offset"] = offset + limit;
  return out;
}

json annotations(bool read_only, bool destructive = false) {
  return {{"readOnlyHint", read_only}, {"destructiveHint", destructive}, {"openWorldHint", false}};
}

std::vector<Tool> make_tools() {
  const json wiki = str("the wiki repository (default: the server's --wiki)");
  const json run_obj = {{"type", "object"},
                        {"properties", {{"run_id", {{"type", "string"}}}}},
                        {"required", {"run_id"}}};
  std::vector<Tool> t;
  t.push_back(
      {"brief",
       {{"title", "Author brief"},
        {"description",
         "The author brief of a pre-registered experiment, or every problem that refuses "
         "it."},
        {"inputSchema", object_schema({{"wiki", wiki},
                                       {"family", kFamily},
                                       {"experiment", kExperiment},
                                       {"chips", str("chip inventory file")}},
                                      {"family", "experiment"})},
        {"outputSchema",
         {{"type", "object"},
          {"properties", {{"sha256", {{"type", "string"}}}, {"markdown", {{"type", "string"}}}}},
          {"required", {"sha256", "markdown"}}}},
        {"annotations", annotations(true)}},
       run_brief});
  t.push_back(
      {"dispatch",
       {{"title", "Dispatch an experiment"},
        {"description",
         "Starts the author and then the verifier of the family's next committed in_progress "
         "experiment in the background and returns its run id at once; follow it with status "
         "and wait."},
        {"inputSchema",
         object_schema(
             {{"wiki", wiki},
              {"family", kFamily},
              {"experiment", kExperiment},
              {"provider", {{"type", "string"}, {"enum", {"anthropic", "openai", "fake"}}}},
              {"model", str("model name")},
              {"base_url", str("provider base URL")},
              {"script", str("the fake model's script (provider fake)")},
              {"max_turns", {{"type", "integer"}, {"minimum", 1}, {"maximum", 1000}}},
              {"max_cost_usd", {{"type", "number"}, {"minimum", 0}}},
              {"chips", str("chip inventory file")},
              {"verify_cmd", str("verify command template")},
              {"mode", {{"type", "string"}, {"enum", {"screen", "full"}}}},
              {"tool_dirs", {{"type", "array"}, {"items", {{"type", "string"}}}}},
              {"supervise",
               {{"type", "boolean"},
                {"description",
                 "the author's run, run_on_chip and commit calls wait for a decision: see "
                 "pending and decide"}}}},
             {"family", "experiment", "provider"})},
        {"outputSchema", kStatusSchema},
        {"annotations", annotations(false)}},
       run_dispatch});
  t.push_back({"status",
               {{"title", "Run status"},
                {"description",
                 "State, phase, turns and cost of one run, or of every run when run_id is "
                 "omitted."},
                {"inputSchema", object_schema({{"run_id", kRunId}}, json::array())},
                {"outputSchema", {{"type", "object"}}},
                {"annotations", annotations(true)}},
               run_status});
  json wait_out = kStatusSchema;
  wait_out["properties"]["changed"] = {{"type", "boolean"}};
  t.push_back(
      {"wait",
       {{"title", "Wait for a run"},
        {"description",
         "Blocks until the run's state, phase, turn count or pending requests change (a "
         "supervised run's state becomes awaiting_approval), the run ends, or timeout_s (at most "
         "45) passes; returns the status."},
        {"inputSchema",
         object_schema({{"run_id", kRunId},
                        {"timeout_s", {{"type", "number"}, {"minimum", 0}, {"maximum", 45}}}},
                       {"run_id"})},
        {"outputSchema", wait_out},
        {"annotations", annotations(true)}},
       run_wait});
  const json request = {
      {"type", "object"},
      {"properties",
       {{"call_id", {{"type", "string"}, {"description", "the call id to decide"}}},
        {"tool", {{"type", "string"}, {"enum", {"run", "run_on_chip", "commit"}}}},
        {"experiment", {{"type", "string"}}},
        {"turn", {{"type", "integer"}}},
        {"command", {{"type", "array"}, {"items", {{"type", "string"}}}}},
        {"message", {{"type", "string"}, {"description", "a commit's message"}}},
        {"shown",
         {{"type", "string"},
          {"description", "the command as shell words, folded, or the commit message"}}},
        {"model_text", {{"type", "string"}, {"description", "what the model said this turn"}}},
        {"asked_at", {{"type", "string"}}},
        {"refused_answer",
         {{"type", "string"}, {"description", "why the last answer was refused"}}}}},
      {"required", {"call_id", "tool", "shown", "turn"}}};
  t.push_back(
      {"pending",
       {{"title", "Requests awaiting a decision"},
        {"description",
         "The run_on_chip, run and commit calls of a supervised run's author that wait for a "
         "decision, each with its call id and the command or commit message as a person reads "
         "it."},
        {"inputSchema", object_schema({{"run_id", kRunId}}, {"run_id"})},
        {"outputSchema",
         {{"type", "object"},
          {"properties",
           {{"run_id", {{"type", "string"}}},
            {"state", {{"type", "string"}}},
            {"pending", {{"type", "array"}, {"items", request}}}}},
          {"required", {"run_id", "state", "pending"}}}},
        {"annotations", annotations(true)}},
       run_pending});
  t.push_back(
      {"decide",
       {{"title", "Decide a pending request"},
        {"description",
         "Answers one pending request of a supervised run: approve; deny with a reason the "
         "model reads; approve_prefix (this call, and for the rest of the session every call of "
         "the same tool whose command starts with its first prefix_words words, all of them "
         "without it); or stop the author session (no verifier). Notes reach the model with the "
         "call's result."},
        {"inputSchema",
         object_schema(
             {{"run_id", kRunId},
              {"call_id", str("the call id, as pending lists it")},
              {"decision",
               {{"type", "string"}, {"enum", {"approve", "deny", "approve_prefix", "stop"}}}},
              {"reason", str("why it is denied (required for deny; the model reads it)")},
              {"prefix_words", {{"type", "integer"}, {"minimum", 1}, {"maximum", 10000}}},
              {"notes",
               {{"type", "array"},
                {"items", str("a note for the model")},
                {"description", "notes the model receives with this call's result"}}}},
             {"run_id", "call_id", "decision"})},
        {"outputSchema",
         {{"type", "object"},
          {"properties",
           {{"run_id", {{"type", "string"}}},
            {"call_id", {{"type", "string"}}},
            {"tool", {{"type", "string"}}},
            {"decision", {{"type", "string"}}},
            {"posted", {{"type", "boolean"}}}}},
          {"required", {"run_id", "call_id", "decision", "posted"}}}},
        {"annotations", annotations(false, true)}},
       run_decide});
  t.push_back({"outcome",
               {{"title", "Run outcome"},
                {"description",
                 "The verdict or error of a finished run, the receipt's numbers and the filing "
                 "proposal."},
                {"inputSchema", object_schema({{"run_id", kRunId}}, {"run_id"})},
                {"outputSchema", run_obj},
                {"annotations", annotations(true)}},
               run_outcome});
  t.push_back({"audit",
               {{"title", "Audit a run"},
                {"description", "Audits the run's transcripts against the wiki; the findings."},
                {"inputSchema", object_schema({{"run_id", kRunId}}, {"run_id"})},
                {"outputSchema", run_obj},
                {"annotations", annotations(true)}},
               run_audit_tool});
  t.push_back({"transcript",
               {{"title", "Read a transcript"},
                {"description", "A page of the run's rendered transcript, one line per record."},
                {"inputSchema",
                 object_schema({{"run_id", kRunId},
                                {"role", {{"type", "string"}, {"enum", {"author", "verifier"}}}},
                                {"offset", {{"type", "integer"}, {"minimum", 0}}},
                                {"limit", {{"type", "integer"}, {"minimum", 1}, {"maximum", 500}}}},
                               {"run_id"})},
                {"outputSchema", run_obj},
                {"annotations", annotations(true)}},
               run_transcript});
  t.push_back({"cancel",
               {{"title", "Cancel a run"},
                {"description",
                 "Stops the run's processes; what was journalled stays (kdispatch run --resume "
                 "continues it)."},
                {"inputSchema", object_schema({{"run_id", kRunId}}, {"run_id"})},
                {"outputSchema", kStatusSchema},
                {"annotations", annotations(false, true)}},
               run_cancel});
  for (auto& tool : t)
    tool.definition["name"] = tool.name;
  return t;
}

}  // namespace

const std::vector<Tool>& tools() {
  static const std::vector<Tool> all = make_tools();
  return all;
}

const Tool* find_tool(const std::string& name) {
  for (const auto& t : tools())
    if (t.name == name) return &t;
  return nullptr;
}

}  // namespace kd::mcp
