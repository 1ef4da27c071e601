#include "agents/session.h"

#include "agents/api_keys.h"
#include "agents/tools.h"
#include "agents/transcript_resume.h"
#include "agents/transcript_writer.h"
#include "common/errors.h"
#include "common/sha256.h"

namespace kd::agents {

namespace asio = boost::asio;
using json = nlohmann::json;

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
  return h;
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

SessionResult recorded_result(const ResumeState& rs) {
  SessionResult res;
  const json& end = *rs.end;
  res.end_reason = end.at("reason").get<std::string>();
  if (!end.at("finish").is_null()) res.finish = end["finish"];
  res.turns = rs.turns;
  res.tool_calls = rs.tool_calls;
  res.input_tokens = rs.input_tokens;
  res.output_tokens = rs.output_tokens;
  res.usage_estimated = rs.usage_estimated;
  res.cost_usd = rs.cost_usd;
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

}  // namespace

asio::awaitable<SessionResult> run_session(SessionConfig cfg, ToolHost& host, HttpClient& http,
                                           const ModelHandle& model, asio::thread_pool& tool_pool) {
  if (cfg.budgets.max_cost_usd > 0 && !model.price) {
    throw Error(
        "no price for model " + quote(model.endpoint.model) +
        " in policies/providers.json: add one, or run without a cost budget (max_cost_usd 0)");
  }
  ResumeState rs;
  if (cfg.resume) rs = read_resume_state(cfg.transcript_dir);
  if (rs.end) co_return recorded_result(rs);
  const bool resuming = rs.tail.records > 0;
  if (resuming) check_resumable(rs, cfg, model);

  std::optional<TranscriptWriter> tw;
  if (cfg.resume) {
    tw.emplace(cfg.transcript_dir, cfg.session_id, cfg.role, rs.tail);
  } else {
    tw.emplace(cfg.transcript_dir, cfg.session_id, cfg.role);
  }
  // Records are written by the disk threads; waiting for them happens on the tool pool so the
  // I/O thread keeps streaming.
  auto durable = [&]() -> asio::awaitable<void> {
    co_await asio::co_spawn(
        tool_pool,
        [&]() -> asio::awaitable<void> {
          tw->flush();
          co_return;
        },
        asio::use_awaitable);
  };

  LlmClient client(http, model.endpoint, cfg.retry, cfg.timeouts);
  Conversation conv;
  conv.system = cfg.system_prompt;
  conv.messages.push_back({Message::Kind::user, cfg.first_user_message, {}, {}});

  SessionResult res;
  res.turns = rs.turns;
  res.tool_calls = rs.tool_calls;
  res.input_tokens = rs.input_tokens;
  res.output_tokens = rs.output_tokens;
  res.cost_usd = rs.cost_usd;
  res.usage_estimated = rs.usage_estimated;
  int nudges = rs.nudges;
  int asked = 0;  // assistant messages in the conversation: the next turn's number is asked + 1
  for (auto& m : rs.messages) {
    if (m.kind == Message::Kind::assistant) ++asked;
    conv.messages.push_back(std::move(m));
  }

  if (resuming) {
    tw->append("note", resume_note(rs));
  } else {
    json header = cfg.header;
    header["model"] = {{"provider", model.provider},
                       {"name", model.endpoint.model},
                       {"base_url", model.endpoint.base_url},
                       {"wire", model.endpoint.wire}};
    header["system_sha256"] = sha256_hex(cfg.system_prompt);
    header["first_user_message_sha256"] = sha256_hex(cfg.first_user_message);
    tw->append("header", header);
  }

  auto start = std::chrono::steady_clock::now();
  auto deadline = start + std::chrono::milliseconds(
                              static_cast<long>((cfg.budgets.max_wall_s - rs.active_s) * 1000));

  auto over_budget = [&]() -> std::string {
    if (res.turns >= cfg.budgets.max_turns) return "budget:turns";
    if (res.input_tokens + res.output_tokens >= cfg.budgets.max_tokens) return "budget:tokens";
    if (cfg.budgets.max_cost_usd > 0 && res.cost_usd >= cfg.budgets.max_cost_usd)
      return "budget:cost";
    if (std::chrono::steady_clock::now() >= deadline) return "budget:wall_time";
    if (res.tool_calls >= cfg.budgets.max_tool_calls) return "budget:tool_calls";
    return "";
  };
  // After a response without tool calls: remind the model, or give up on it.
  auto nudge_or_end = [&] {
    if (nudges >= cfg.max_nudges) {
      res.end_reason = "ended_without_finish";
      return;
    }
    ++nudges;
    std::string nudge =
        "Your turn ended without a tool call. Continue with the tools, or call finish with the "
        "output contract.";
    tw->append("note", {{"text", "nudge " + std::to_string(nudges) + ": " + nudge},
                        {"nudge", nudges},
                        {"message", nudge}});
    conv.messages.push_back({Message::Kind::user, nudge, {}, {}});
  };
  auto turn_done = [&]() -> asio::awaitable<void> {
    if (!cfg.on_turn) co_return;
    co_await durable();
    res.transcript_head = tw->head();
    cfg.on_turn(res);
  };

  if (rs.finish) {
    res.finish = rs.finish;
    res.end_reason = "finished";
  } else if (conv.messages.back().kind == Message::Kind::assistant) {
    nudge_or_end();  // the crash came between a response without tool calls and its nudge
  }

  int turn_no = 0;
  CallHooks hooks;
  hooks.on_text = cfg.on_text;
  hooks.on_request = [&](int attempt, const json& body) {
    tw->append("request", {{"turn", turn_no},
                           {"attempt", attempt},
                           {"provider", model.endpoint.wire},
                           {"body", body}});
  };
  hooks.on_retry = [&](int attempt, const std::string& cause, double delay_s) {
    tw->append("note", {{"text", "attempt " + std::to_string(attempt) + " of turn " +
                                     std::to_string(turn_no) + " failed (" + cause +
                                     "); retrying from the last complete turn in " +
                                     std::to_string(delay_s) + " s"}});
  };

  while (res.end_reason.empty()) {
    if (std::string b = over_budget(); !b.empty()) {
      res.end_reason = b;
      break;
    }
    turn_no = asked + 1;
    AssistantTurn turn;
    try {
      turn = co_await client.complete(conv, cfg.tools, hooks, deadline);
    } catch (const ProviderGaveUp& e) {
      tw->append("note", {{"text", e.what()}});
      res.end_reason = e.reason();
      break;
    }
    ++res.turns;
    ++asked;
    if (!turn.usage.reported) {
      res.usage_estimated = true;
      size_t out = turn.text.size();
      for (const auto& c : turn.tool_calls)
        out += c.input_raw.size();
      turn.usage.input_tokens = estimate_tokens(
          client.provider()
              .request_body(conv, cfg.tools, model.endpoint.model, model.endpoint.max_tokens, false)
              .dump()
              .size());
      turn.usage.output_tokens = estimate_tokens(out);
    }
    double turn_cost =
        model.price ? cost_usd(*model.price, turn.usage.input_tokens, turn.usage.output_tokens) : 0;
    res.input_tokens += turn.usage.input_tokens;
    res.output_tokens += turn.usage.output_tokens;
    res.cost_usd += turn_cost;
    json calls = json::array();
    for (const auto& c : turn.tool_calls)
      calls.push_back(call_record(c));
    tw->append("response", {{"turn", turn_no},
                            {"text", turn.text},
                            {"tool_calls", calls},
                            {"stop_reason", turn.stop_reason},
                            {"usage",
                             {{"input_tokens", turn.usage.input_tokens},
                              {"output_tokens", turn.usage.output_tokens},
                              {"reported", turn.usage.reported}}},
                            {"cost_usd", turn_cost},
                            {"request_id", turn.request_id},
                            {"echo", turn.echo}});
    conv.messages.push_back({Message::Kind::assistant, {}, turn, {}});

    if (turn.tool_calls.empty()) {
      nudge_or_end();
      co_await turn_done();
      continue;
    }

    Message results{Message::Kind::tool_results, {}, {}, {}};
    for (const ToolCall& call : turn.tool_calls) {
      tw->append("tool_call", call_record(call));
      ToolOutcome out;
      bool not_run = false;
      if (!res.end_reason.empty()) {
        out = {"not run: the session already ended (" + res.end_reason + ")", true};
        not_run = true;
      } else if (res.tool_calls >= cfg.budgets.max_tool_calls) {
        out = {"not run: the session's tool-call budget is spent", true};
        not_run = true;
      } else if (auto err = validate_call(cfg.tools, call)) {
        out = {*err, true};
        ++res.tool_calls;
      } else if (call.name == "finish" && !check_finish(call.input, cfg.finish).empty()) {
        out = {finish_rejection(check_finish(call.input, cfg.finish)), true};
        ++res.tool_calls;
      } else {
        ++res.tool_calls;
        // Write-ahead: the call is on disk before it can change anything, so a resume knows
        // which calls of a half-done turn may have run.
        co_await durable();
        try {
          out = co_await asio::co_spawn(
              tool_pool,
              [&host, &call]() -> asio::awaitable<ToolOutcome> { co_return host.call(call); },
              asio::use_awaitable);
        } catch (const std::exception& e) {
          out = {std::string("the tool host failed: ") + e.what(), true};
          tw->append("note",
                     {{"text", "tool " + call.name + " (" + call.id + ") raised: " + e.what()}});
        }
        if (call.name == "finish" && !out.is_error) {
          res.finish = call.input;
          res.end_reason = "finished";
          if (out.content.empty()) out.content = "finish accepted";
        }
      }
      json rec = out.record.is_object() ? out.record : json::object();
      json violations = rec.contains("violations") ? rec["violations"] : json::array();
      rec.erase("violations");
      rec["id"] = call.id;
      rec["name"] = call.name;
      rec["is_error"] = out.is_error;
      if (not_run) rec["not_run"] = true;
      rec["content"] = out.content;
      tw->append("tool_result", rec);
      for (auto& v : violations) {
        if (!v.is_object()) continue;
        v["tool_call_id"] = call.id;
        tw->append("violation", v);
      }
      results.results.push_back({call.id, call.name, out.content, out.is_error});
    }
    conv.messages.push_back(std::move(results));
    co_await turn_done();
  }

  tw->append("end", {{"reason", res.end_reason},
                     {"finish", res.finish ? *res.finish : json(nullptr)},
                     {"turns", res.turns},
                     {"input_tokens", res.input_tokens},
                     {"output_tokens", res.output_tokens},
                     {"cost_usd", res.cost_usd}});
  co_await durable();
  res.transcript_head = tw->head();
  co_return res;
}

}  // namespace kd::agents
