#include "agents/session.h"

#include "agents/api_keys.h"
#include "agents/tools.h"
#include "agents/transcript_writer.h"
#include "common/errors.h"

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

}  // namespace

asio::awaitable<SessionResult> run_session(SessionConfig cfg, ToolHost& host, HttpClient& http,
                                           const ModelHandle& model, asio::thread_pool& tool_pool) {
  if (cfg.budgets.max_cost_usd > 0 && !model.price) {
    throw Error(
        "no price for model " + quote(model.endpoint.model) +
        " in policies/providers.json: add one, or run without a cost budget (max_cost_usd 0)");
  }
  TranscriptWriter tw(cfg.transcript_dir, cfg.session_id, cfg.role);
  json header = cfg.header;
  header["model"] = {{"provider", model.provider},
                     {"name", model.endpoint.model},
                     {"base_url", model.endpoint.base_url}};
  tw.append("header", header);

  LlmClient client(http, model.endpoint, cfg.retry, cfg.timeouts);
  Conversation conv;
  conv.system = cfg.system_prompt;
  conv.messages.push_back({Message::Kind::user, cfg.first_user_message, {}, {}});

  SessionResult res;
  auto start = std::chrono::steady_clock::now();
  auto deadline =
      start + std::chrono::milliseconds(static_cast<long>(cfg.budgets.max_wall_s * 1000));
  int nudges = 0;

  auto over_budget = [&]() -> std::string {
    if (res.turns >= cfg.budgets.max_turns) return "budget:turns";
    if (res.input_tokens + res.output_tokens >= cfg.budgets.max_tokens) return "budget:tokens";
    if (cfg.budgets.max_cost_usd > 0 && res.cost_usd >= cfg.budgets.max_cost_usd)
      return "budget:cost";
    if (std::chrono::steady_clock::now() >= deadline) return "budget:wall_time";
    if (res.tool_calls >= cfg.budgets.max_tool_calls) return "budget:tool_calls";
    return "";
  };

  int turn_no = 0;
  CallHooks hooks;
  hooks.on_text = cfg.on_text;
  hooks.on_request = [&](int attempt, const json& body) {
    tw.append("request", {{"turn", turn_no},
                          {"attempt", attempt},
                          {"provider", model.endpoint.wire},
                          {"body", body}});
  };
  hooks.on_retry = [&](int attempt, const std::string& cause, double delay_s) {
    tw.append("note", {{"text", "attempt " + std::to_string(attempt) + " of turn " +
                                    std::to_string(turn_no) + " failed (" + cause +
                                    "); retrying from the last complete turn in " +
                                    std::to_string(delay_s) + " s"}});
  };

  while (res.end_reason.empty()) {
    if (std::string b = over_budget(); !b.empty()) {
      res.end_reason = b;
      break;
    }
    turn_no = res.turns + 1;
    AssistantTurn turn;
    try {
      turn = co_await client.complete(conv, cfg.tools, hooks, deadline);
    } catch (const ProviderGaveUp& e) {
      tw.append("note", {{"text", e.what()}});
      res.end_reason = e.reason();
      break;
    }
    ++res.turns;
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
    res.input_tokens += turn.usage.input_tokens;
    res.output_tokens += turn.usage.output_tokens;
    if (model.price)
      res.cost_usd += cost_usd(*model.price, turn.usage.input_tokens, turn.usage.output_tokens);
    json calls = json::array();
    for (const auto& c : turn.tool_calls)
      calls.push_back(call_record(c));
    tw.append("response", {{"turn", turn_no},
                           {"text", turn.text},
                           {"tool_calls", calls},
                           {"stop_reason", turn.stop_reason},
                           {"usage",
                            {{"input_tokens", turn.usage.input_tokens},
                             {"output_tokens", turn.usage.output_tokens},
                             {"reported", turn.usage.reported}}},
                           {"request_id", turn.request_id}});
    conv.messages.push_back({Message::Kind::assistant, {}, turn, {}});

    if (turn.tool_calls.empty()) {
      if (nudges >= cfg.max_nudges) {
        res.end_reason = "ended_without_finish";
        break;
      }
      ++nudges;
      std::string nudge =
          "Your turn ended without a tool call. Continue with the tools, or call finish with the "
          "output contract.";
      tw.append("note", {{"text", "nudge " + std::to_string(nudges) + ": " + nudge}});
      conv.messages.push_back({Message::Kind::user, nudge, {}, {}});
      continue;
    }

    Message results{Message::Kind::tool_results, {}, {}, {}};
    for (const ToolCall& call : turn.tool_calls) {
      tw.append("tool_call", call_record(call));
      ToolOutcome out;
      if (!res.end_reason.empty()) {
        out = {"not run: the session already ended (" + res.end_reason + ")", true};
      } else if (res.tool_calls >= cfg.budgets.max_tool_calls) {
        out = {"not run: the session's tool-call budget is spent", true};
      } else if (auto err = validate_call(cfg.tools, call)) {
        out = {*err, true};
        ++res.tool_calls;
      } else if (call.name == "finish" && !check_finish(call.input, cfg.finish).empty()) {
        out = {finish_rejection(check_finish(call.input, cfg.finish)), true};
        ++res.tool_calls;
      } else {
        ++res.tool_calls;
        try {
          out = co_await asio::co_spawn(
              tool_pool,
              [&host, &call]() -> asio::awaitable<ToolOutcome> { co_return host.call(call); },
              asio::use_awaitable);
        } catch (const std::exception& e) {
          out = {std::string("the tool host failed: ") + e.what(), true};
          tw.append("note",
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
      rec["content"] = out.content;
      tw.append("tool_result", rec);
      for (auto& v : violations) {
        if (!v.is_object()) continue;
        v["tool_call_id"] = call.id;
        tw.append("violation", v);
      }
      results.results.push_back({call.id, call.name, out.content, out.is_error});
    }
    conv.messages.push_back(std::move(results));
  }

  tw.append("end", {{"reason", res.end_reason},
                    {"finish", res.finish ? *res.finish : json(nullptr)},
                    {"turns", res.turns},
                    {"input_tokens", res.input_tokens},
                    {"output_tokens", res.output_tokens},
                    {"cost_usd", res.cost_usd}});
  res.transcript_head = tw.head();
  co_return res;
}

}  // namespace kd::agents
