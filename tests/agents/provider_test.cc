#include "agents/provider.h"

#include <gtest/gtest.h>

namespace kd::agents {
namespace {

using json = nlohmann::json;

Conversation tool_round_trip(const Provider& p, const json& first_response) {
  Conversation c;
  c.system = "sys";
  c.messages.push_back({Message::Kind::user, "go", {}, {}});
  AssistantTurn t = p.parse_response(first_response);
  c.messages.push_back({Message::Kind::assistant, {}, t, {}});
  Message r{Message::Kind::tool_results, {}, {}, {}};
  r.results.push_back({t.tool_calls[0].id, t.tool_calls[0].name, "42", false});
  r.results.push_back({t.tool_calls[1].id, t.tool_calls[1].name, "no such file", true});
  c.messages.push_back(r);
  return c;
}

const std::vector<ToolSpec> kTools = {
    {"read_file", "read", {{"type", "object"}, {"properties", {{"path", {{"type", "string"}}}}}}}};

TEST(AnthropicRequest, EchoesContentAndSendsAllResultsInOneUserMessage) {
  auto p = make_anthropic_provider();
  json resp = {
      {"id", "msg_1"},
      {"type", "message"},
      {"role", "assistant"},
      {"stop_reason", "tool_use"},
      {"content",
       {{{"type", "thinking"}, {"thinking", "hm"}, {"signature", "sig"}},
        {{"type", "tool_use"}, {"id", "tu1"}, {"name", "read_file"}, {"input", {{"path", "a"}}}},
        {{"type", "tool_use"}, {"id", "tu2"}, {"name", "read_file"}, {"input", {{"path", "b"}}}}}},
      {"usage", {{"input_tokens", 10}, {"cache_creation_input_tokens", 5}, {"output_tokens", 3}}},
      {"future", true}};
  Conversation c = tool_round_trip(*p, resp);
  json body = p->request_body(c, kTools, "claude-x", 1000, true);
  EXPECT_EQ(body["system"], "sys");
  EXPECT_EQ(body["stream"], true);
  EXPECT_EQ(body["tools"][0]["input_schema"]["type"], "object");
  ASSERT_EQ(body["messages"].size(), 3u);
  EXPECT_EQ(body["messages"][1]["content"], resp["content"])
      << "assistant content echoed unchanged";
  const json& results = body["messages"][2]["content"];
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0], json({{"type", "tool_result"}, {"tool_use_id", "tu1"}, {"content", "42"}}));
  EXPECT_EQ(results[1]["is_error"], true);
  AssistantTurn t = p->parse_response(resp);
  EXPECT_EQ(t.usage.input_tokens, 15);
  EXPECT_EQ(t.usage.output_tokens, 3);
}

TEST(OpenAIRequest, OneToolMessagePerCallAndArgumentsAsStrings) {
  auto p = make_openai_provider();
  json resp = {{"id", "c1"},
               {"choices",
                {{{"index", 0},
                  {"finish_reason", "stop"},
                  {"message",
                   {{"role", "assistant"},
                    {"content", nullptr},
                    {"tool_calls",
                     {{{"id", "call_1"},
                       {"type", "function"},
                       {"function", {{"name", "read_file"}, {"arguments", "{\"path\": \"a\"}"}}}},
                      {{"id", "call_2"},
                       {"type", "function"},
                       {"function", {{"name", "read_file"}, {"arguments", "{oops"}}}}}}}}}}},
               {"usage", {{"prompt_tokens", 7}, {"completion_tokens", 2}}}};
  AssistantTurn t = p->parse_response(resp);
  ASSERT_EQ(t.tool_calls.size(), 2u) << "tool calls found although finish_reason is stop";
  EXPECT_TRUE(t.tool_calls[0].input_is_json);
  EXPECT_FALSE(t.tool_calls[1].input_is_json);
  Conversation c = tool_round_trip(*p, resp);
  json body = p->request_body(c, kTools, "gpt-x", 1000, true);
  EXPECT_EQ(body["messages"][0], json({{"role", "system"}, {"content", "sys"}}));
  EXPECT_EQ(body["messages"][2]["tool_calls"][0]["function"]["arguments"], "{\"path\": \"a\"}");
  EXPECT_EQ(body["messages"][2]["tool_calls"][1]["function"]["arguments"], "{oops");
  EXPECT_EQ(body["messages"][3],
            json({{"role", "tool"}, {"tool_call_id", "call_1"}, {"content", "42"}}));
  EXPECT_EQ(body["messages"][4]["tool_call_id"], "call_2");
  EXPECT_EQ(body["stream_options"]["include_usage"], true);
  EXPECT_EQ(body["tools"][0]["function"]["parameters"]["type"], "object");
}

// Markers per the caching rules: tools and system once with the static TTL, then the newest and
// the previous user message with 5m; at most 4; assistant content echoed unchanged.
TEST(AnthropicRequest, CacheMarkersOnToolsSystemAndTheTwoNewestUserMessages) {
  auto p = make_anthropic_provider();
  json resp = {
      {"id", "m"}, {"content", {{{"type", "text"}, {"text", "hi"}}}}, {"stop_reason", "end_turn"}};
  Conversation c;
  c.system = "sys";
  c.messages.push_back({Message::Kind::user, "go", {}, {}});
  for (int i = 0; i < 3; ++i) {
    c.messages.push_back({Message::Kind::assistant, {}, p->parse_response(resp), {}});
    c.messages.push_back({Message::Kind::user, "more " + std::to_string(i), {}, {}});
  }
  std::vector<ToolSpec> tools = kTools;
  tools.push_back({"write_file", "write", {{"type", "object"}}});
  CacheOptions cache;
  cache.enabled = true;
  cache.static_ttl = "1h";
  json body = p->request_body(c, tools, "claude-x", 1000, true, cache);
  const json hour = {{"type", "ephemeral"}, {"ttl", "1h"}};
  const json five = {{"type", "ephemeral"}};
  EXPECT_FALSE(body["tools"][0].contains("cache_control"));
  EXPECT_EQ(body["tools"][1]["cache_control"], hour);
  EXPECT_EQ(body["system"],
            json::array({{{"type", "text"}, {"text", "sys"}, {"cache_control", hour}}}));
  int markers = 2;
  const json& msgs = body["messages"];
  for (size_t i = 0; i < msgs.size(); ++i) {
    for (const auto& b : msgs[i]["content"]) {
      if (!b.contains("cache_control")) continue;
      ++markers;
      EXPECT_EQ(b["cache_control"], five);
      EXPECT_TRUE(i == msgs.size() - 1 || i == msgs.size() - 3) << "marker on message " << i;
    }
    if (msgs[i]["role"] == "assistant") {
      EXPECT_EQ(msgs[i]["content"], resp["content"]);
    }
  }
  EXPECT_EQ(markers, 4);
  EXPECT_EQ(msgs[0]["content"], json::array({{{"type", "text"}, {"text", "go"}}}))
      << "user text as a block, the same bytes with or without a marker";
  json plain = p->request_body(c, tools, "claude-x", 1000, true);
  EXPECT_EQ(plain["system"], "sys") << "no caching asked: no markers";
  EXPECT_EQ(plain.dump().find("cache_control"), std::string::npos);
}

TEST(AnthropicUsage, CacheCountsWithTheirTtlSplitAndUnknownWhenAbsent) {
  auto p = make_anthropic_provider();
  json resp = {{"content", json::array()},
               {"usage",
                {{"input_tokens", 10},
                 {"cache_creation_input_tokens", 300},
                 {"cache_creation",
                  {{"ephemeral_5m_input_tokens", 100}, {"ephemeral_1h_input_tokens", 200}}},
                 {"cache_read_input_tokens", 5000},
                 {"output_tokens", 7}}}};
  Usage u = p->parse_response(resp).usage;
  EXPECT_EQ(u.input_tokens, 5310) << "the prompt is input + writes + reads";
  EXPECT_EQ(u.cache_write_5m_tokens, 100);
  EXPECT_EQ(u.cache_write_1h_tokens, 200);
  EXPECT_EQ(u.cache_read_tokens, 5000);
  resp["usage"].erase("cache_creation");
  u = p->parse_response(resp).usage;
  EXPECT_EQ(u.cache_write_5m_tokens, 300) << "without the split every write is a 5m one";
  EXPECT_EQ(u.cache_write_1h_tokens, 0);
  u = p->parse_response(
           {{"content", json::array()}, {"usage", {{"input_tokens", 10}, {"output_tokens", 1}}}})
          .usage;
  EXPECT_EQ(u.input_tokens, 10);
  EXPECT_FALSE(u.cache_read_tokens) << "a missing field is unknown, not zero";
  EXPECT_FALSE(u.cache_write_5m_tokens);
}

TEST(OpenAIUsage, CachedTokensInsidePromptTokensAndTheSessionKey) {
  auto p = make_openai_provider();
  json resp = {
      {"choices", {{{"index", 0}, {"message", {{"role", "assistant"}, {"content", "x"}}}}}},
      {"usage",
       {{"prompt_tokens", 2000},
        {"completion_tokens", 5},
        {"prompt_tokens_details", {{"cached_tokens", 1920}}}}}};
  Usage u = p->parse_response(resp).usage;
  EXPECT_EQ(u.input_tokens, 2000);
  EXPECT_EQ(u.cache_read_tokens, 1920);
  EXPECT_FALSE(u.cache_write_5m_tokens);
  resp["usage"].erase("prompt_tokens_details");
  EXPECT_FALSE(p->parse_response(resp).usage.cache_read_tokens)
      << "a server that does not report caching: unknown";
  Conversation c;
  c.system = "sys";
  c.messages.push_back({Message::Kind::user, "go", {}, {}});
  CacheOptions cache;
  cache.enabled = true;
  cache.prompt_cache_key = "kd-s1";
  EXPECT_EQ(p->request_body(c, kTools, "gpt-x", 10, false, cache)["prompt_cache_key"], "kd-s1");
  EXPECT_FALSE(p->request_body(c, kTools, "gpt-x", 10, false).contains("prompt_cache_key"));
}

TEST(ProviderErrors, ErrorBodiesOfEveryShape) {
  EXPECT_EQ(parse_error_body(
                R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})")
                .type,
            "overloaded_error");
  ErrorBody o = parse_error_body(
      R"({"error":{"message":"quota","type":"insufficient_quota","code":"insufficient_quota"}})");
  EXPECT_EQ(o.type, "insufficient_quota");
  EXPECT_EQ(o.message, "quota");
  EXPECT_EQ(parse_error_body(R"({"object":"error","message":"bad","code":400})").message, "bad");
  EXPECT_EQ(parse_error_body("<html>413</html>").type, "non_json_body");
}

TEST(ProviderErrors, WholeResponsesWithoutContentAreProtocolErrors) {
  EXPECT_THROW(make_anthropic_provider()->parse_response(json{{"id", "x"}}), ProtocolError);
  EXPECT_THROW(make_openai_provider()->parse_response(json{{"choices", json::array()}}),
               ProtocolError);
}

}  // namespace
}  // namespace kd::agents
