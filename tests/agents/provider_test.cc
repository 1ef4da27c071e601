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
