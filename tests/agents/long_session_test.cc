// Long sessions against the fake server's emulation: caching cuts the bill and the session's
// own cost matches it, masking keeps a session inside its window, a "prompt is too long" answer
// is retried once after masking deeper, the transcript stays linear and verifiable, a resume
// masks what was masked, and sessions sharing a rate limiter stay under the provider's bucket.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>

#include "agents/session.h"
#include "agents/tools.h"
#include "common/files.h"
#include "common/policy_path.h"
#include "contract/transcript_chain.h"
#include "contract/transcript_requests.h"
#include "tests/agents/test_util.h"
#include "tests/support/process.h"

namespace kd::agents {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

// Every call prints a log of `bytes` bytes, different per call (as a build log would be).
class LogHost : public ToolHost {
 public:
  explicit LogHost(size_t bytes) : bytes_(bytes) {}
  ToolOutcome call(const ToolCall& c) override {
    std::string out;
    for (size_t line = 0; out.size() < bytes_; ++line)
      out += c.id + " step " + std::to_string(line) + ": compiled kernel tile ok\n";
    out.resize(bytes_);
    return {out};
  }

 private:
  size_t bytes_;
};

std::string run_script(int turns, const std::string& emulate) {
  std::string t;
  for (int i = 0; i < turns; ++i) {
    t += std::string(i ? "," : "") + R"({"text":"step )" + std::to_string(i) +
         R"(","tool_calls":[{"id":"c)" + std::to_string(i) +
         R"(","name":"run","input":{"command":["make","test"]}}],"usage":{"output_tokens":20}})";
  }
  return R"({"model":"fake-author","emulate":)" + emulate + R"(,"turns":[)" + t + "]}";
}

struct Outcome {
  SessionResult result;
  FakeServer::Billing billing;
  fs::path transcript;
};

class LongSession : public testing::Test {
 protected:
  Outcome run(const std::string& script, const std::string& wire, int turns, size_t output_bytes,
              std::function<void(SessionConfig&)> tweak = {}, const std::string& name = "s") {
    FakeServer server(FakeScript::parse(script, "script"));
    ModelConfig mc;
    mc.provider = wire == "openai" ? "openai" : "anthropic";
    mc.model = wire == "openai" ? "gpt-4.1" : "claude-sonnet-4-5";
    mc.base_url = server.base_url();
    mc.max_tokens = 512;
    ModelHandle h = open_model(mc, ProvidersPolicy::load(policy_file("providers.json")));
    SessionConfig cfg;
    cfg.session_id = name;
    cfg.system_prompt = "You write kernels. " + std::string(8000, 'b');
    cfg.first_user_message = "author the family";
    cfg.tools = author_tools();
    cfg.budgets.max_turns = turns;
    cfg.budgets.max_cost_usd = 0;
    cfg.transcript_dir = fs::path(tmp_.path()) / name;
    cfg.retry.base = std::chrono::milliseconds(5);
    if (tweak) tweak(cfg);
    LogHost host(output_bytes);
    boost::asio::io_context io;
    HttpClient http(io.get_executor());
    boost::asio::thread_pool pool(1);
    Outcome r;
    r.result = test::run_sync(io, run_session(cfg, host, http, h, pool));
    pool.join();
    r.billing = server.billing();
    r.transcript = cfg.transcript_dir / "transcript.jsonl";
    return r;
  }

  static long bill(const Price& p, const FakeServer::Billing& b) {
    Usage u;
    u.input_tokens = b.input_tokens;
    u.cache_read_tokens = b.cache_read;
    u.cache_write_5m_tokens = b.cache_write_5m;
    u.cache_write_1h_tokens = b.cache_write_1h;
    u.output_tokens = b.output_tokens;
    return cost_microusd(p, u);
  }

  std::vector<json> records(const fs::path& p) {
    std::vector<json> out;
    std::ifstream in(p);
    for (std::string line; std::getline(in, line);)
      out.push_back(json::parse(line));
    return out;
  }

  kd::test::TempDir tmp_;
};

class LongSessionWire : public LongSession, public testing::WithParamInterface<std::string> {};

TEST_P(LongSessionWire, CachingCutsTheBillAndTheSessionCostMatchesIt) {
  const std::string wire = GetParam();
  const int turns = 30;
  Outcome cached = run(run_script(turns, R"({"cache":true})"), wire, turns, 4000);
  Outcome plain = run(
      run_script(turns, R"({"count_tokens":true})"), wire, turns, 4000,
      [](SessionConfig& c) { c.prompt_cache = false; }, "plain");
  ASSERT_EQ(to_string(cached.result.end_reason), "budget:turns");
  ASSERT_EQ(to_string(plain.result.end_reason), "budget:turns");
  Price p = *ProvidersPolicy::load(policy_file("providers.json"))
                 .price(wire == "openai" ? "gpt-4.1" : "claude-sonnet-4-5");
  long with = bill(p, cached.billing), without = bill(p, plain.billing);
  EXPECT_LT(with * 100, without * 40) << with << " vs " << without;
  EXPECT_GT(cached.result.cache_read_tokens, 0);
  // The session's own account is the bill, to a micro-dollar per turn of rounding.
  EXPECT_GE(cached.result.cost_microusd, with);
  EXPECT_LE(cached.result.cost_microusd, with + turns);
  EXPECT_EQ(cached.result.input_tokens, cached.billing.input_tokens);
}

TEST_P(LongSessionWire, MaskingKeepsTheSessionInsideItsWindowAndTheTranscriptLinear) {
  const std::string wire = GetParam();
  const int turns = 40;
  // 40 outputs of 8 KB are about 80k tokens; the window is 25k.
  Outcome r = run(run_script(turns, R"({"cache":true,"context_window":25000})"), wire, turns, 8000,
                  [](SessionConfig& c) { c.context.window = 25000; });
  EXPECT_EQ(to_string(r.result.end_reason), "budget:turns");
  EXPECT_EQ(r.result.turns, turns);
  EXPECT_EQ(r.billing.overflows, 0);
  EXPECT_GE(r.result.masking_steps, 1);
  EXPECT_LE(r.result.masking_steps, 8) << "big, rare steps";
  // The brief and the instructions are still in the last request, old outputs are stubs that
  // name their records.
  contract::transcript::RequestRebuilder rebuild(
      [&](const std::string& d) { return read_file(r.transcript.parent_path() / "blobs" / d); });
  json last;
  size_t big_requests = 0, requests = 0;
  for (const auto& rec : records(r.transcript)) {
    std::optional<json> body = rebuild.feed(rec["seq"], rec["type"], rec["data"]);
    if (!body) continue;
    last = *body;
    ++requests;
    // Each tool output is stored once, in its tool_result record: a request refers to it.
    if (requests > 1 && rec["data"].dump().size() > 8000u) ++big_requests;
  }
  std::string text = last.dump();
  EXPECT_NE(text.find("You write kernels."), std::string::npos);
  EXPECT_NE(text.find("author the family"), std::string::npos);
  EXPECT_NE(text.find("masked to keep the context window; transcript record"), std::string::npos);
  // A request record holds one turn without its outputs, even after a masking step rewrote the
  // history after its first stub.
  EXPECT_EQ(big_requests, 0u);
  auto v = kd::test::run_kdispatch({"transcript", "verify", r.transcript.string()});
  EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
  EXPECT_NE(v.out.find(std::to_string(requests) + " requests rebuilt"), std::string::npos) << v.out;
}

TEST_P(LongSessionWire, APromptTooLongIsRetriedOnceAfterMaskingDeeper) {
  const std::string wire = GetParam();
  const int turns = 20;
  // The session does not mask ahead (its high-water mark is past the window): the provider's
  // 400 is what makes it mask.
  Outcome r = run(run_script(turns, R"({"context_window":20000})"), wire, turns, 8000,
                  [](SessionConfig& c) {
                    c.context.window = 20000;
                    c.context.high_water = 100;
                  });
  EXPECT_EQ(to_string(r.result.end_reason), "budget:turns");
  EXPECT_GE(r.result.overflow_errors, 1);
  EXPECT_EQ(r.billing.overflows, r.result.overflow_errors);
  EXPECT_EQ(r.result.masking_steps, r.result.overflow_errors);
}

// Reseals every line after changing the data of `edited`: a chain that is intact again, so only
// the replay of the requests can see the edit.
std::string reseal(const std::vector<json>& recs, size_t edited, const json& data) {
  std::string prev(contract::kZeroHash), text;
  for (size_t i = 0; i < recs.size(); ++i) {
    const json& r = recs[i];
    contract::ChainRecord c{r["seq"],
                            prev,
                            r["ts"],
                            r["session"],
                            r["role"],
                            r["type"],
                            (i == edited ? data : r["data"]).dump()};
    text += contract::seal_chain_line(c, &prev) + "\n";
  }
  return text;
}

TEST_P(LongSessionWire, AToolOutputIsStoredOnceAndAnEditOfItFailsVerify) {
  const std::string wire = GetParam();
  const int turns = 6;
  Outcome r = run(run_script(turns, R"({"cache":true})"), wire, turns, 20000);
  ASSERT_EQ(to_string(r.result.end_reason), "budget:turns");
  std::vector<json> recs = records(r.transcript);
  std::string text = read_file(r.transcript);
  // Each 20 KB output once (its tool_result record), not again in the next request: with the
  // brief, the tools and the records around them well under 1.5x the outputs (twice the
  // outputs and more when they are repeated).
  EXPECT_LT(text.size(), static_cast<size_t>(turns) * 20000 * 3 / 2) << text.size();
  size_t result = 0, refs = 0;
  for (size_t i = 0; i < recs.size(); ++i) {
    if (recs[i]["type"] == "tool_result" && result == 0) result = i;
    if (recs[i]["type"] == "request") refs += recs[i]["data"].value("refs", json::array()).size();
  }
  EXPECT_EQ(refs, static_cast<size_t>(turns - 1)) << "every output but the last is sent again";
  ASSERT_GT(result, 0u);
  auto ok = kd::test::run_kdispatch({"transcript", "verify", r.transcript.string()});
  ASSERT_EQ(ok.exit_code, 0) << ok.out << ok.err;

  json data = recs[result]["data"];
  std::string content = data["content"];
  content[100] = content[100] == 'X' ? 'Y' : 'X';
  data["content"] = content;
  write_file_atomic(r.transcript, reseal(recs, result, data));
  auto bad = kd::test::run_kdispatch({"transcript", "verify", r.transcript.string()});
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_NE(bad.out.find("request not reconstructible: the rebuilt body does not match"),
            std::string::npos)
      << bad.out;
}

INSTANTIATE_TEST_SUITE_P(Wires, LongSessionWire, testing::Values("anthropic", "openai"),
                         [](const auto& info) { return info.param; });

TEST_F(LongSession, ResumeMasksWhatWasMasked) {
  const int turns = 30;
  std::string script = run_script(turns, R"({"cache":true,"context_window":25000})");
  auto tweak = [](SessionConfig& c) { c.context.window = 25000; };
  Outcome ref = run(script, "anthropic", turns, 8000, tweak, "ref");
  ASSERT_GE(ref.result.masking_steps, 1);
  // Cut before the last request: the resumed session must send that request byte for byte.
  std::vector<std::string> lines;
  {
    std::ifstream in(ref.transcript);
    for (std::string l; std::getline(in, l);)
      lines.push_back(l);
  }
  size_t last_request = 0;
  for (size_t i = 0; i < lines.size(); ++i)
    if (json::parse(lines[i])["type"] == "request") last_request = i;
  fs::create_directories(fs::path(tmp_.path()) / "cut");
  std::string text;
  for (size_t i = 0; i < last_request; ++i)
    text += lines[i] + "\n";
  write_file_atomic(fs::path(tmp_.path()) / "cut" / "transcript.jsonl", text);
  if (fs::exists(ref.transcript.parent_path() / "blobs"))
    fs::copy(ref.transcript.parent_path() / "blobs", fs::path(tmp_.path()) / "cut" / "blobs");
  Outcome resumed = run(
      script, "anthropic", turns, 8000,
      [&](SessionConfig& c) {
        tweak(c);
        c.resume = true;
      },
      "cut");
  EXPECT_EQ(to_string(resumed.result.end_reason), "budget:turns");
  EXPECT_EQ(resumed.result.masking_steps, ref.result.masking_steps);
  auto recs = records(resumed.transcript);
  std::string resent;
  for (size_t i = last_request; i < recs.size(); ++i)
    if (recs[i]["type"] == "request") {
      resent = recs[i]["data"]["sha256"];
      break;
    }
  EXPECT_EQ(resent, json::parse(lines[last_request])["data"]["sha256"].get<std::string>());
}

}  // namespace
}  // namespace kd::agents
