#include "agents/session.h"

#include "agents/api_keys.h"
#include "agents/tools.h"
#include "agents/transcript_resume.h"
#include "agents/transcript_writer.h"
#include "common/errors.h"
#include "common/sha256.h"
#include "contract/transcript_records.h"
#include "contract/transcript_requests.h"

namespace kd::agents {

namespace asio = boost::asio;
using json = nlohmann::json;
namespace records = contract::transcript;
using contract::EndReason;

ModelHandle open_model(const ModelConfig& config, const ProvidersPolicy& policy) {
  const ProviderEntry& entry = policy.provider(config.provider);
  ModelHandle h;
  h.provider = config.provider;
  h.endpoint.wire = entry.wire;
  h.endpoint.model = config.model.empty() ? entry.default_model : config.model;
  h.endpoint.max_tokens = config.max_tokens;
  h.endpoint.stream = config.stream;
  if (config.provider == "fake") {
    if (config.script.empty()) throw Error("--provider fake needs --script FILE");
    h.fake = std::make_shared<FakeServer>(FakeScript::load(config.script));
    h.endpoint.base_url = h.fake->base_url();
  } else {
    h.endpoint.base_url = config.base_url.empty() ? entry.base_url : config.base_url;
    if (!entry.key_env.empty()) h.endpoint.key = take_api_key(entry.key_env);
    // Local OpenAI-compatible servers (vLLM, llama.cpp, Ollama) take no key; the provider's
    // own service does.
    if (h.endpoint.key.empty() && !entry.key_env.empty() && config.base_url.empty()) {
      throw Error(entry.key_env + " is not set (needed for --provider " + config.provider + ")");
    }
  }
  h.price = policy.price(h.endpoint.model);
  h.context_window = policy.context_window(h.endpoint.model);
  h.prompt_cache_key = entry.prompt_cache_key;
  // One limiter per provider, server and model: the fake servers of a test process are apart.
  h.endpoint.limiter = shared_rate_limiter(config.provider + " " + h.endpoint.base_url,
                                           h.endpoint.model, h.endpoint.wire);
  return h;
}

std::string static_cache_ttl(const Budgets& b) {
  return b.max_wall_s >= 1800 && b.max_turns >= 10 ? "1h" : "5m";
}

namespace {

long estimate_tokens(size_t bytes) {
  return static_cast<long>(bytes / 4 + 1);
}

json call_record(const ToolCall& c) {
  json d = {{"id", c.id}, {"name", c.name}, {"input", c.input}};
  if (!c.input_is_json) d["input_raw"] = c.input_raw;
  return d;
}

// The session a transcript records must be the one asked for: another model could not take
// the echoed turns, another brief would make a different conversation.
void check_resumable(const ResumeState& rs, const SessionConfig& cfg, const ModelHandle& model) {
  std::string where = quote((cfg.transcript_dir / "transcript.jsonl").string());
  const json& h = rs.header;
  auto field = [&](const json& j, const char* key) {
    return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>()
                                                                  : std::string("(none)");
  };
  const json& m = h.is_object() && h.contains("model") ? h["model"] : json();
  if (field(m, "provider") != model.provider || field(m, "name") != model.endpoint.model) {
    throw Error("cannot resume " + where + ": it records provider " + field(m, "provider") +
                ", model " + field(m, "name") + "; this session uses provider " + model.provider +
                ", model " + model.endpoint.model);
  }
  for (auto [key, text] : {std::pair{"system_sha256", &cfg.system_prompt},
                           std::pair{"first_user_message_sha256", &cfg.first_user_message}}) {
    if (field(h, key) == "(none)") {
      throw Error("cannot resume " + where + ": its header has no " + key +
                  " (written before resumable transcripts)");
    }
    if (field(h, key) != sha256_hex(*text)) {
      throw Error("cannot resume " + where + ": header " + key + " is " + field(h, key) +
                  ", this session's is " + sha256_hex(*text) + " (the brief changed)");
    }
  }
}

// What a transcript already counted (turns, calls, tokens, cost) carries into the result.
void take_counts(SessionResult& res, const ResumeState& rs) {
  res.turns = rs.turns;
  res.tool_calls = rs.tool_calls;
  res.input_tokens = rs.input_tokens;
  res.output_tokens = rs.output_tokens;
  res.usage_estimated = rs.usage_estimated;
  res.cost_microusd = rs.cost_microusd;
  res.cost_usd = microusd_to_usd(rs.cost_microusd);
  res.cache_read_tokens = rs.cache_read_tokens;
  res.cache_write_tokens = rs.cache_write_tokens;
  res.masking_steps = rs.masking_steps;
}

// The result a transcript that ended records. Throws naming the transcript when its end
// record's reason is none of the session's.
SessionResult recorded_result(const ResumeState& rs, const std::filesystem::path& dir) {
  SessionResult res;
  const json& end = *rs.end;
  const std::string reason = end.at("reason").get<std::string>();
  std::optional<EndReason> parsed = contract::parse_end_reason(reason);
  if (!parsed) {
    throw Error("cannot resume " + quote((dir / "transcript.jsonl").string()) +
                ": its end record's reason " + quote(reason) + " is not an end reason");
  }
  res.end_reason = *parsed;
  if (parsed->kind == EndReason::Kind::Provider)
    res.provider_failure = classify_provider_failure(parsed->detail, "");
  if (!end.at("finish").is_null()) res.finish = end["finish"];
  take_counts(res, rs);
  res.transcript_head = rs.tail.head;
  return res;
}

json resume_note(const ResumeState& rs) {
  json ids = json::array();
  std::string listed;
  for (const auto& c : rs.dropped_calls) {
    ids.push_back(c.id);
    listed += (listed.empty() ? "" : ", ") + c.name + " " + c.id;
  }
  std::string text = "resumed after seq " + std::to_string(rs.tail.records - 1);
  if (rs.tail.torn_bytes > 0) {
    text += " (a torn last line of " + std::to_string(rs.tail.torn_bytes) + " bytes was cut)";
  }
  text += ": " + std::to_string(rs.kept_turns) + " complete turns kept, " +
          std::to_string(rs.dropped_turns) + " dropped";
  if (rs.dropped_turns > 0) {
    text += listed.empty() ? " (none of its tool calls had started)"
                           : " (its calls that may have run: " + listed + ")";
  }
  return {{"text", text},
          {"resumed",
           {{"after_seq", rs.tail.records - 1},
            {"torn_bytes", rs.tail.torn_bytes},
            {"kept_turns", rs.kept_turns},
            {"dropped_turns", rs.dropped_turns},
            {"dropped_calls", ids}}}};
}

// Known cache counts only: an absent field stays unknown when read back.
json usage_record(const Usage& u) {
  json j = {{"input_tokens", u.input_tokens},
            {"output_tokens", u.output_tokens},
            {"reported", u.reported}};
  if (u.cache_read_tokens) j["cache_read_tokens"] = *u.cache_read_tokens;
  if (u.cache_write_5m_tokens) j["cache_write_5m_tokens"] = *u.cache_write_5m_tokens;
  if (u.cache_write_1h_tokens) j["cache_write_1h_tokens"] = *u.cache_write_1h_tokens;
  return j;
}

json response_record(const AssistantTurn& turn, int turn_no, long cost) {
  json calls = json::array();
  for (const auto& c : turn.tool_calls)
    calls.push_back(call_record(c));
  return {{"turn", turn_no},
          {"text", turn.text},
          {"tool_calls", calls},
          {"stop_reason", turn.stop_reason},
          {"usage", usage_record(turn.usage)},
          {"cost_microusd", cost},
          {"cost_usd", microusd_to_usd(cost)},
          {"request_id", turn.request_id},
          {"echo", turn.echo}};
}

// The model's endpoint with this session's caching: the static TTL its budgets pay for, its
// own cache routing key where the provider takes one.
Endpoint session_endpoint(const ModelHandle& model, const SessionConfig& cfg) {
  Endpoint ep = model.endpoint;
  ep.cache.enabled = cfg.prompt_cache;
  ep.cache.static_ttl = static_cache_ttl(cfg.budgets);
  if (model.prompt_cache_key) ep.cache.prompt_cache_key = "kd-" + cfg.session_id;
  return ep;
}

ContextPolicy context_policy(ContextPolicy p, const ModelHandle& model) {
  if (p.window == 0) p.window = model.context_window;
  return p;
}

ToolOutcome not_run(const std::string& why) {
  ToolOutcome out{"not run: " + why, true};
  out.record["not_run"] = true;
  return out;
}

// One session: its transcript, its conversation and its counters, and the steps of the
// tool-use loop. run() lists the steps in order; each step records what it did.
class Session {
 public:
  Session(SessionConfig cfg, ToolHost& host, HttpClient& http, const ModelHandle& model,
          asio::thread_pool& tool_pool);
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  asio::awaitable<SessionResult> run();

 private:
  bool start_or_resume();
  void open_transcript(bool resuming);
  void take_up_conversation();
  bool budget_spent();
  size_t request_size() const;
  void keep_context_window();
  void mask(double fraction_of_low, const std::string& why);
  bool cost_reserved();
  void record_request(int attempt, const json& body);
  asio::awaitable<std::optional<AssistantTurn>> ask_model();
  void record_response(AssistantTurn& turn);
  void estimate_usage(AssistantTurn& turn) const;
  asio::awaitable<void> run_calls(const AssistantTurn& turn);
  asio::awaitable<ToolOutcome> run_call(const ToolCall& call);
  asio::awaitable<ToolOutcome> call_host(const ToolCall& call);
  void record_result(const ToolCall& call, const ToolOutcome& out);
  void note_output(const std::string& content, long seq);
  void nudge_or_end();
  asio::awaitable<void> turn_done();
  asio::awaitable<SessionResult> end();
  asio::awaitable<void> durable();
  void end_with(contract::EndReason reason);

  SessionConfig cfg_;
  ToolHost& host_;
  const ModelHandle& model_;
  asio::thread_pool& tool_pool_;
  LlmClient client_;
  CallHooks hooks_;
  ResumeState resumed_;
  std::optional<TranscriptWriter> tw_;
  Conversation conv_;
  SessionResult res_;
  std::optional<contract::EndReason> ended_;  // set once: the loop stops, later calls are not run
  int nudges_ = 0;
  int asked_ = 0;    // assistant messages in the conversation: the next turn is asked_ + 1
  int turn_no_ = 0;  // the turn being asked, named by its request and retry records
  std::chrono::steady_clock::time_point deadline_;
  ContextWindow context_;
  json last_body_;  // the last request recorded (redacted): the next one records what changed
  size_t last_body_bytes_ = 0;
  // The tool outputs the transcript holds: a request refers to them rather than repeating them.
  contract::transcript::RecordedOutputs outputs_;
};

Session::Session(SessionConfig cfg, ToolHost& host, HttpClient& http, const ModelHandle& model,
                 asio::thread_pool& tool_pool)
    : cfg_(std::move(cfg)),
      host_(host),
      model_(model),
      tool_pool_(tool_pool),
      client_(http, session_endpoint(model, cfg_), cfg_.retry, cfg_.timeouts),
      context_(context_policy(cfg_.context, model), model.endpoint.max_tokens) {
  hooks_.on_text = cfg_.on_text;
  hooks_.on_request = [this](int attempt, const json& body) { record_request(attempt, body); };
  hooks_.on_retry = [this](int attempt, const std::string& cause, double delay_s) {
    tw_->append(records::kNote, {{"text", "attempt " + std::to_string(attempt) + " of turn " +
                                              std::to_string(turn_no_) + " failed (" + cause +
                                              "); retrying from the last complete turn in " +
                                              std::to_string(delay_s) + " s"}});
  };
}

asio::awaitable<SessionResult> Session::run() {
  if (!start_or_resume()) co_return recorded_result(resumed_, cfg_.transcript_dir);
  while (!ended_) {
    if (budget_spent()) break;
    keep_context_window();
    if (!cost_reserved()) break;
    std::optional<AssistantTurn> turn = co_await ask_model();
    if (!turn) break;  // the provider gave up
    record_response(*turn);
    if (turn->tool_calls.empty()) {
      nudge_or_end();
    } else {
      co_await run_calls(*turn);
    }
    co_await turn_done();
  }
  co_return co_await end();
}

// Opens the transcript (a new one with its header, or the recorded one continued after a
// note) and takes up the conversation. False when the recorded session already ended.
bool Session::start_or_resume() {
  if (cfg_.budgets.max_cost_usd > 0 && !model_.price) {
    throw Error(
        "no price for model " + quote(model_.endpoint.model) +
        " in policies/providers.json: add one, or run without a cost budget (max_cost_usd 0)");
  }
  if (cfg_.resume) resumed_ = read_resume_state(cfg_.transcript_dir);
  if (resumed_.end) return false;
  const bool resuming = resumed_.tail.records > 0;
  if (resuming) check_resumable(resumed_, cfg_, model_);
  open_transcript(resuming);
  take_up_conversation();
  deadline_ = std::chrono::steady_clock::now() +
              std::chrono::milliseconds(
                  static_cast<long>((cfg_.budgets.max_wall_s - resumed_.active_s) * 1000));
  if (resumed_.finish) {
    res_.finish = resumed_.finish;
    end_with(EndReason::finished());
  } else if (conv_.messages.back().kind == Message::Kind::assistant) {
    nudge_or_end();  // the crash came between a response without tool calls and its nudge
  }
  return true;
}

void Session::open_transcript(bool resuming) {
  if (cfg_.resume) {
    tw_.emplace(cfg_.transcript_dir, cfg_.session_id, cfg_.role, resumed_.tail);
  } else {
    tw_.emplace(cfg_.transcript_dir, cfg_.session_id, cfg_.role);
  }
  if (resuming) {
    tw_->append(records::kNote, resume_note(resumed_));
    return;
  }
  json header = cfg_.header;
  header["model"] = {{"provider", model_.provider},
                     {"name", model_.endpoint.model},
                     {"base_url", model_.endpoint.base_url},
                     {"wire", model_.endpoint.wire}};
  header["system_sha256"] = sha256_hex(cfg_.system_prompt);
  header["first_user_message_sha256"] = sha256_hex(cfg_.first_user_message);
  tw_->append(records::kHeader, header);
}

// The first user message, then what a resumed transcript kept, with its counters.
void Session::take_up_conversation() {
  conv_.system = cfg_.system_prompt;
  conv_.messages.push_back({Message::Kind::user, cfg_.first_user_message, {}, {}});
  for (auto& m : resumed_.messages) {
    if (m.kind == Message::Kind::assistant) ++asked_;
    for (const ToolResult& r : m.results)
      if (!r.masked) note_output(r.content, r.record_seq);
    conv_.messages.push_back(std::move(m));
  }
  take_counts(res_, resumed_);
  nudges_ = resumed_.nudges;
  context_.calibrate(static_cast<size_t>(resumed_.calibration_bytes), resumed_.calibration_tokens);
}

bool Session::budget_spent() {
  const Budgets& b = cfg_.budgets;
  const char* which = res_.turns >= b.max_turns                                ? "turns"
                      : res_.input_tokens + res_.output_tokens >= b.max_tokens ? "tokens"
                      : b.max_cost_usd > 0 && res_.cost_usd >= b.max_cost_usd  ? "cost"
                      : std::chrono::steady_clock::now() >= deadline_          ? "wall_time"
                      : res_.tool_calls >= b.max_tool_calls                    ? "tool_calls"
                                                                               : nullptr;
  if (which) end_with(EndReason::budget(which));
  return which != nullptr;
}

// The next assistant turn; none when the provider gave up (the session then ends with its
// reason).
asio::awaitable<std::optional<AssistantTurn>> Session::ask_model() {
  turn_no_ = asked_ + 1;
  if (cfg_.on_turn_start) cfg_.on_turn_start(turn_no_);
  for (int overflow = 0;; ++overflow) {
    std::optional<contract::EndReason> gave_up;
    std::optional<ProviderFailure> failure;
    std::string what;
    try {
      co_return co_await client_.complete(conv_, cfg_.tools, hooks_, deadline_);
    } catch (const ProviderGaveUp& e) {
      gave_up = e.reason();
      failure = e.failure();
      what = e.what();
    }
    tw_->append(records::kNote, {{"text", what}});
    // The estimate was wrong: mask deeper and ask once more; a second refusal ends the session.
    if (is_context_overflow(to_string(*gave_up), what)) {
      ++res_.overflow_errors;
      if (overflow == 0) {
        mask(0.6, "the provider said the prompt is too long");
        continue;
      }
    }
    res_.provider_failure = failure;  // only the give-up that ends the session counts
    end_with(*gave_up);
    co_return std::nullopt;
  }
}

// The size of the next request as the provider will get it.
size_t Session::request_size() const {
  const Endpoint& ep = client_.endpoint();
  return contract::transcript::request_bytes(
             client_.provider().request_body(conv_, cfg_.tools, ep.model, ep.max_tokens, ep.stream,
                                             ep.cache))
      .size();
}

void Session::keep_context_window() {
  if (context_.policy().window <= 0) return;
  if (context_.over_high_water(request_size()))
    mask(1, "the next request passes the high-water mark");
}

// One masking step: old outputs become stubs in the conversation, and a note names them so that
// a resume masks the same ones.
void Session::mask(double fraction_of_low, const std::string& why) {
  size_t before = request_size();
  std::vector<const ToolResult*> masked = context_.mask(conv_, before, fraction_of_low);
  if (masked.empty()) return;
  ++res_.masking_steps;
  json ids = json::array();
  for (const ToolResult* r : masked)
    ids.push_back({{"id", r->tool_call_id}, {"seq", r->record_seq}});
  size_t after = request_size();
  tw_->append(records::kNote,
              {{"text", "masked " + std::to_string(masked.size()) + " old tool outputs (" + why +
                            "): about " + std::to_string(context_.estimate(before)) + " -> " +
                            std::to_string(context_.estimate(after)) + " tokens"},
               {"masked", ids}});
}

// The budget must hold the worst the next call can cost before it is made, so it is never
// overshot by a whole call.
bool Session::cost_reserved() {
  const Budgets& b = cfg_.budgets;
  if (b.max_cost_usd <= 0 || !model_.price) return true;
  const long budget = static_cast<long>(b.max_cost_usd * 1e6);
  const long worst = worst_case_microusd(*model_.price, context_.estimate(request_size()),
                                         client_.endpoint().max_tokens);
  if (res_.cost_microusd + worst <= budget) return true;
  tw_->append(
      records::kNote,
      {{"text", "the next call could cost up to " + std::to_string(worst) + " micro-dollars; " +
                    std::to_string(budget - res_.cost_microusd) + " are left of the cost budget"}});
  end_with(EndReason::budget("cost"));
  return false;
}

// A linear request record: what changed since the last request recorded, and the digest of the
// whole body (contract/transcript_requests.h).
void Session::record_request(int attempt, const json& body) {
  json redacted = body;
  tw_->redact(redacted);
  json data = contract::transcript::request_delta(last_body_, redacted, outputs_);
  data["turn"] = turn_no_;
  data["attempt"] = attempt;
  data["provider"] = model_.endpoint.wire;
  last_body_bytes_ = contract::transcript::request_bytes(body).size();
  data["bytes"] = last_body_bytes_;  // with the response's token count: a resume's calibration
  last_body_ = std::move(redacted);
  tw_->append(records::kRequest, std::move(data));
}

// Counts the turn (estimating usage the provider did not report), records it and adds it to
// the conversation.
void Session::record_response(AssistantTurn& turn) {
  ++res_.turns;
  ++asked_;
  if (!turn.usage.reported) estimate_usage(turn);
  if (turn.usage.reported) context_.calibrate(last_body_bytes_, turn.usage.input_tokens);
  long cost = model_.price ? cost_microusd(*model_.price, turn.usage) : 0;
  res_.input_tokens += turn.usage.input_tokens;
  res_.output_tokens += turn.usage.output_tokens;
  res_.cache_read_tokens += turn.usage.cache_read_tokens.value_or(0);
  res_.cache_write_tokens +=
      turn.usage.cache_write_5m_tokens.value_or(0) + turn.usage.cache_write_1h_tokens.value_or(0);
  res_.cost_microusd += cost;
  res_.cost_usd = microusd_to_usd(res_.cost_microusd);
  tw_->append(records::kResponse, response_record(turn, turn_no_, cost));
  conv_.messages.push_back({Message::Kind::assistant, {}, turn, {}});
}

void Session::estimate_usage(AssistantTurn& turn) const {
  size_t out = turn.text.size();
  for (const auto& c : turn.tool_calls)
    out += c.input_raw.size();
  const Endpoint& ep = model_.endpoint;
  size_t in = client_.provider()
                  .request_body(conv_, cfg_.tools, ep.model, ep.max_tokens, false, ep.cache)
                  .dump()
                  .size();
  turn.usage.input_tokens = estimate_tokens(in);
  turn.usage.output_tokens = estimate_tokens(out);
}

// Every call of the turn gets a result, in call order, even those not run.
asio::awaitable<void> Session::run_calls(const AssistantTurn& turn) {
  Message results{Message::Kind::tool_results, {}, {}, {}};
  for (const ToolCall& call : turn.tool_calls) {
    tw_->append(records::kToolCall, call_record(call));
    ToolOutcome out = co_await run_call(call);
    long seq = static_cast<long>(tw_->records());
    record_result(call, out);
    results.results.push_back({call.id, call.name, out.content, out.is_error, seq, false});
  }
  conv_.messages.push_back(std::move(results));
}

// A call after the end or past the budget is not run (and not counted); one that fails
// validation or the finish contract is counted and answered with the problems.
asio::awaitable<ToolOutcome> Session::run_call(const ToolCall& call) {
  if (ended_) co_return not_run("the session already ended (" + to_string(*ended_) + ")");
  if (res_.tool_calls >= cfg_.budgets.max_tool_calls) {
    co_return not_run("the session's tool-call budget is spent");
  }
  ++res_.tool_calls;
  if (auto err = validate_call(cfg_.tools, call)) co_return ToolOutcome{*err, true};
  if (call.name == "finish") {
    std::vector<std::string> problems = check_finish(call.input, cfg_.finish);
    if (!problems.empty()) co_return ToolOutcome{finish_rejection(problems), true};
  }
  ToolOutcome out = co_await call_host(call);
  if (out.stop) end_with(EndReason::stopped());
  if (call.name == "finish" && !out.is_error) {
    res_.finish = call.input;
    end_with(EndReason::finished());
    if (out.content.empty()) out.content = "finish accepted";
  }
  co_return out;
}

asio::awaitable<ToolOutcome> Session::call_host(const ToolCall& call) {
  // Write-ahead: the call is on disk before it can change anything, so a resume knows which
  // calls of a half-done turn may have run.
  co_await durable();
  try {
    co_return co_await asio::co_spawn(
        tool_pool_,
        [&host = host_, &call]() -> asio::awaitable<ToolOutcome> { co_return host.call(call); },
        asio::use_awaitable);
  } catch (const std::exception& e) {
    tw_->append(records::kNote,
                {{"text", "tool " + call.name + " (" + call.id + ") raised: " + e.what()}});
    co_return ToolOutcome{std::string("the tool host failed: ") + e.what(), true};
  }
}

// The supervising person's decisions about the call, the tool_result record, then one violation
// record per refusal the host reported.
void Session::record_result(const ToolCall& call, const ToolOutcome& out) {
  json result = out.record.is_object() ? out.record : json::object();
  json violations = result.contains("violations") ? result["violations"] : json::array();
  json decisions = result.contains("decisions") ? result["decisions"] : json::array();
  result.erase("violations");
  result.erase("decisions");
  for (auto& d : decisions) {
    if (!d.is_object()) continue;
    d["tool_call_id"] = call.id;
    tw_->append(records::kDecision, d);
  }
  result["id"] = call.id;
  result["name"] = call.name;
  result["is_error"] = out.is_error;
  result["content"] = out.content;
  tw_->append(records::kToolResult, result);
  note_output(out.content, static_cast<long>(tw_->records()) - 1);
  for (auto& v : violations) {
    if (!v.is_object()) continue;
    v["tool_call_id"] = call.id;
    tw_->append(records::kViolation, v);
  }
}

// Indexed as the record stores it (redacted), which is how the request record sees it too.
void Session::note_output(const std::string& content, long seq) {
  if (seq < 0 || content.size() < contract::transcript::kMinRefBytes) return;
  json c = content;
  tw_->redact(c);
  outputs_[sha256_hex(c.get<std::string>())] = static_cast<std::uint64_t>(seq);
}

// After a response without tool calls: remind the model, or give up on it.
void Session::nudge_or_end() {
  if (nudges_ >= cfg_.max_nudges) {
    end_with(EndReason::without_finish());
    return;
  }
  ++nudges_;
  std::string nudge =
      "Your turn ended without a tool call. Continue with the tools, or call finish with the "
      "output contract.";
  tw_->append(records::kNote, {{"text", "nudge " + std::to_string(nudges_) + ": " + nudge},
                               {"nudge", nudges_},
                               {"message", nudge}});
  conv_.messages.push_back({Message::Kind::user, nudge, {}, {}});
}

asio::awaitable<void> Session::turn_done() {
  if (!cfg_.on_turn) co_return;
  co_await durable();
  res_.transcript_head = tw_->head();
  cfg_.on_turn(res_);
}

asio::awaitable<SessionResult> Session::end() {
  tw_->append(records::kEnd, {{"reason", to_string(res_.end_reason)},
                              {"finish", res_.finish ? *res_.finish : json(nullptr)},
                              {"turns", res_.turns},
                              {"input_tokens", res_.input_tokens},
                              {"output_tokens", res_.output_tokens},
                              {"cost_microusd", res_.cost_microusd},
                              {"cost_usd", res_.cost_usd}});
  co_await durable();
  res_.transcript_head = tw_->head();
  co_return res_;
}

// Records are written by the disk threads; waiting for them happens on the tool pool so the
// I/O thread keeps streaming.
asio::awaitable<void> Session::durable() {
  co_await asio::co_spawn(
      tool_pool_,
      [&tw = *tw_]() -> asio::awaitable<void> {
        tw.flush();
        co_return;
      },
      asio::use_awaitable);
}

void Session::end_with(contract::EndReason reason) {
  res_.end_reason = reason;
  ended_ = std::move(reason);
}

}  // namespace

asio::awaitable<SessionResult> run_session(SessionConfig cfg, ToolHost& host, HttpClient& http,
                                           const ModelHandle& model, asio::thread_pool& tool_pool) {
  Session session(std::move(cfg), host, http, model, tool_pool);
  co_return co_await session.run();
}

}  // namespace kd::agents
