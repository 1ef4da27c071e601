// The checks of policies/providers.json and of fake-llm scripts: each refusal names the file,
// the entry and the field, in the words the loaders have always used.
#include <gtest/gtest.h>

#include "agents/fake/script.h"
#include "agents/providers_policy.h"
#include "common/errors.h"
#include "common/files.h"
#include "tests/support/process.h"

namespace kd::agents {
namespace {

const char* kGoodPolicy = R"({
  "providers": {"fake": {"wire": "anthropic", "base_url": "", "key_env": "", "default_model": "m"}},
  "models": [{"model": "m*", "context_window": 1000,
              "microusd_per_mtok": {"input": 1500000, "output": 2000000, "cache_write_5m": 1875000,
                                    "cache_write_1h": 3000000, "cache_read": 150000}},
             {"model": "unpriced-*", "context_window": 500}]
})";

// The message ProvidersPolicy::load gives for `text`, or "(accepted)".
std::string policy_error(const std::string& text) {
  kd::test::TempDir tmp;
  std::string path = tmp / "providers.json";
  write_file_atomic(path, text);
  try {
    ProvidersPolicy::load(path);
    return "(accepted)";
  } catch (const Error& e) {
    std::string msg = e.what();
    return msg.rfind(path, 0) == 0 ? "P" + msg.substr(path.size()) : "(not naming the file) " + msg;
  }
}

std::string with(std::string text, const std::string& from, const std::string& to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

TEST(ProvidersPolicyLoad, AcceptsAGoodPolicyAndMatchesPricesByPattern) {
  kd::test::TempDir tmp;
  write_file_atomic(tmp / "p.json", kGoodPolicy);
  ProvidersPolicy p = ProvidersPolicy::load(tmp / "p.json");
  EXPECT_EQ(p.provider("fake").wire, "anthropic");
  EXPECT_EQ(p.provider("fake").base_url, "");
  ASSERT_TRUE(p.price("m-large"));
  EXPECT_EQ(p.price("m-large")->input, 1'500'000);
  EXPECT_EQ(p.price("m-large")->cache_write_1h, 3'000'000);
  EXPECT_EQ(p.context_window("m-large"), 1000);
  EXPECT_FALSE(p.price("other"));
  EXPECT_FALSE(p.has_price("other"));
  EXPECT_FALSE(p.has_price("unpriced-x")) << "a window without a price is not a price";
  EXPECT_EQ(p.context_window("unpriced-x"), 500);
  EXPECT_TRUE(p.has_price("m-small"));
}

TEST(ProvidersPolicyLoad, ErrorsNameTheFileTheEntryAndTheField) {
  EXPECT_EQ(policy_error("[1]"), "P: not a JSON object");
  EXPECT_EQ(policy_error("{"), "P: not a JSON object");
  EXPECT_EQ(policy_error(R"({"models": []})"), "P: no \"providers\" object");
  EXPECT_EQ(policy_error(with(kGoodPolicy, "\"key_env\": \"\"", "\"key_env\": 3")),
            "P: providers.fake.key_env must be a string");
  EXPECT_EQ(policy_error(with(kGoodPolicy, "\"wire\": \"anthropic\"", "\"wire\": \"grpc\"")),
            "P: providers.fake.wire must be anthropic or openai, not \"grpc\"");
  EXPECT_EQ(policy_error(with(kGoodPolicy, "\"default_model\": \"m\"",
                              "\"default_model\": \"m\", \"colour\": 1")),
            "P: providers.fake: unknown field \"colour\"");
  EXPECT_EQ(policy_error(with(kGoodPolicy, "\"models\": [", "\"prices\": [")),
            "P: unknown field \"prices\"");
  EXPECT_EQ(policy_error(with(kGoodPolicy, "\"output\": 2000000", "\"output\": 2.5")),
            "P: models[0].microusd_per_mtok: output must be a non-negative integer");
  EXPECT_EQ(policy_error(with(kGoodPolicy, "\"input\": 1500000", "\"input\": -1")),
            "P: models[0].microusd_per_mtok: input must be a non-negative integer");
  EXPECT_EQ(
      policy_error(with(kGoodPolicy, "\"cache_read\": 150000", "\"cache_read\": 1, \"x\": 1")),
      "P: models[0].microusd_per_mtok: unknown field \"x\"");
  EXPECT_EQ(policy_error(with(kGoodPolicy, "\"cache_write_1h\": 3000000, ", "")),
            "P: models[0].microusd_per_mtok: cache_write_1h must be a non-negative integer");
  EXPECT_EQ(
      policy_error(with(kGoodPolicy, "\"context_window\": 1000", "\"context_window\": \"big\"")),
      "P: models[0]: context_window must be a non-negative integer");
}

TEST(Cost, IntegerMicroDollarsPerCategoryRoundedUpOnce) {
  Price p{3'000'000, 15'000'000, 3'750'000, 6'000'000, 300'000};  // Sonnet 4.5
  Usage u;
  u.input_tokens = 10'000;  // 1'000 uncached + 2'000 5m writes + 1'000 1h writes + 6'000 reads
  u.cache_write_5m_tokens = 2'000;
  u.cache_write_1h_tokens = 1'000;
  u.cache_read_tokens = 6'000;
  u.output_tokens = 500;
  // 1000*3 + 2000*3.75 + 1000*6 + 6000*0.3 + 500*15 = 3000+7500+6000+1800+7500 micro-dollars.
  EXPECT_EQ(cost_microusd(p, u), 25'800);
  Usage unknown;
  unknown.input_tokens = 10'000;
  unknown.output_tokens = 500;
  EXPECT_EQ(cost_microusd(p, unknown), 30'000 + 7'500) << "unknown cache counts bill as input";
  Usage one;
  one.input_tokens = 1;
  EXPECT_EQ(cost_microusd(p, one), 3) << "3 micro-dollars for one token at $3/MTok";
  Usage tiny;
  tiny.cache_read_tokens = 1;
  tiny.input_tokens = 1;
  EXPECT_EQ(cost_microusd(p, tiny), 1) << "0.3 rounds up to a whole micro-dollar";
  EXPECT_EQ(worst_case_microusd(p, 10'000, 1'000), 10'000 * 6 + 1'000 * 15)
      << "every input token at the 1-hour write price, every output token allowed";
}

// The message FakeScript::parse gives for `text`, or "(accepted)".
std::string script_error(const std::string& text) {
  try {
    FakeScript::parse(text, "s.json");
    return "(accepted)";
  } catch (const Error& e) {
    return e.what();
  }
}

std::string one_turn(const std::string& fields) {
  return R"({"turns":[{"text":"a")" + fields + "}]}";
}

TEST(FakeScriptParse, EachCheckNamesTheSourceTheTurnAndTheField) {
  EXPECT_EQ(
      script_error(R"({"turns":[{"text":"a"}],"speed":1})"),
      "s.json: unknown field \"speed\" (fields: chunk_bytes, comment, emulate, model, pace_ms, "
      "turns)");
  EXPECT_EQ(script_error(R"({"model":1,"turns":[{"text":"a"}]})"),
            "s.json: model must be a string");
  EXPECT_EQ(script_error(R"({"chunk_bytes":-1,"turns":[{"text":"a"}]})"),
            "s.json: chunk_bytes must be a non-negative integer");
  EXPECT_EQ(script_error(R"({"pace_ms":"1","turns":[{"text":"a"}]})"),
            "s.json: pace_ms must be a non-negative number");
  EXPECT_EQ(script_error(R"({"turns":{}})"), "s.json: \"turns\" must be a non-empty array");
  EXPECT_EQ(script_error(R"({"turns":[3]})"), "s.json: turns[0]: a turn is an object");
  EXPECT_EQ(script_error(R"({"turns":[{"text":["a",1]}]})"),
            "s.json: turns[0]: text pieces must be strings");
  EXPECT_EQ(script_error(R"({"turns":[{"text":1}]})"),
            "s.json: turns[0]: text must be a string or an array of string pieces");
  EXPECT_EQ(script_error(one_turn(R"(,"tool_calls":{})")),
            "s.json: turns[0]: tool_calls must be an array");
  EXPECT_EQ(script_error(one_turn(R"(,"tool_calls":[{"name":"run","args":{}}])")),
            "s.json: turns[0].tool_calls[0]: unknown field \"args\" (fields: arguments_raw, id, "
            "input, name)");
  EXPECT_EQ(script_error(one_turn(R"(,"tool_calls":[{"name":"run","arguments_raw":{}}])")),
            "s.json: turns[0].tool_calls[0]: arguments_raw must be a string");
  EXPECT_EQ(script_error(one_turn(R"(,"tool_calls":[{"name":"run","input":[]}])")),
            "s.json: turns[0].tool_calls[0]: input must be an object");
  EXPECT_EQ(script_error(one_turn(R"(,"stop_reason":1)")),
            "s.json: turns[0]: stop_reason must be a string");
  EXPECT_EQ(script_error(one_turn(R"(,"usage":[])")), "s.json: turns[0]: usage must be an object");
  EXPECT_EQ(script_error(one_turn(R"(,"noise":"yes")")),
            "s.json: turns[0]: noise must be true or false");
  EXPECT_EQ(script_error(one_turn(R"(,"faults":{})")), "s.json: turns[0]: faults must be an array");
  EXPECT_EQ(script_error(one_turn(R"(,"faults":[{"status":500}])")),
            "s.json: turns[0].faults[0]: a fault is an object with a string \"kind\"");
  EXPECT_EQ(script_error(one_turn(R"(,"faults":[{"kind":"stall"}])")),
            "s.json: turns[0].faults[0]: a stall needs \"seconds\" > 0");
  EXPECT_EQ(
      script_error(one_turn(R"(,"faults":[{"kind":"status","status":503,"retry_after":-1}])")),
      "s.json: turns[0].faults[0]: retry_after must be a non-negative number of seconds");
  EXPECT_EQ(script_error(one_turn(R"(,"faults":[{"kind":"truncate","after_events":1.5}])")),
            "s.json: turns[0].faults[0]: after_events must be a non-negative integer");
  EXPECT_EQ(script_error(one_turn(R"(,"faults":[{"kind":"truncate","error_type":5}])")),
            "s.json: turns[0].faults[0]: error_type must be a string");
  EXPECT_EQ(script_error(R"({"turns":[{"stop_reason":"x"}]})"),
            "s.json: turns[0]: a turn needs text or tool_calls");
}

TEST(FakeScriptParse, FaultsAndDefaultsAreReadAsWritten) {
  FakeScript s = FakeScript::parse(
      one_turn(
          R"(,"tool_calls":[{"name":"run"}],"faults":[{"kind":"status","status":429,)"
          R"("retry_after":1.5,"error_type":"x"},{"kind":"stall","seconds":2,"after_events":0},)"
          R"({"kind":"error_event"},{"kind":"truncate"},{"kind":"malformed_json"}])"),
      "s.json");
  ASSERT_EQ(s.turns.size(), 1u);
  const FakeTurn& t = s.turns[0];
  EXPECT_EQ(t.tool_calls.at(0).id, "call_0_0");
  EXPECT_EQ(t.tool_calls.at(0).input, nlohmann::json::object());
  ASSERT_EQ(t.faults.size(), 5u);
  EXPECT_EQ(t.faults[0].kind, FaultKind::Status);
  EXPECT_EQ(t.faults[0].status, 429);
  EXPECT_EQ(t.faults[0].retry_after_s, 1.5);
  EXPECT_EQ(t.faults[0].error_type, "x");
  EXPECT_EQ(t.faults[1].kind, FaultKind::Stall);
  EXPECT_EQ(t.faults[1].seconds, 2);
  EXPECT_EQ(t.faults[1].after_events, 0);
  EXPECT_EQ(t.faults[2].kind, FaultKind::ErrorEvent);
  EXPECT_EQ(t.faults[2].after_events, 2);
  EXPECT_EQ(t.faults[3].kind, FaultKind::Truncate);
  EXPECT_EQ(t.faults[4].kind, FaultKind::MalformedJson);
  EXPECT_EQ(s.model, "fake-author");
  EXPECT_TRUE(t.split_text);
}

}  // namespace
}  // namespace kd::agents
