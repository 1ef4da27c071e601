// The tool-use loop end to end: fake server over real HTTP, a real ToolHost working on files,
// processes and git in a temp dir, and the transcript it leaves.
#include "agents/session.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "agents/tools.h"
#include "common/errors.h"
#include "common/files.h"
#include "common/policy_path.h"
#include "contract/transcript_chain.h"
#include "tests/agents/test_util.h"
#include "tests/support/process.h"

namespace kd::agents {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

// Works on a real directory: files, child processes, a git repository. Paths that leave the
// work dir are refused and reported as violations, as the sandbox box would.
class DirHost : public ToolHost {
 public:
  explicit DirHost(std::string root) : root_(std::move(root)) {
    fs::create_directories(root_);
    git({"init", "-q"});
    git({"config", "user.email", "t@example.com"});
    git({"config", "user.name", "t"});
  }
  std::vector<std::string> run_outputs;

  ToolOutcome call(const ToolCall& c) override {
    const json& in = c.input;
    if (in.contains("path") && !inside(in["path"])) {
      return {"denied: " + in["path"].get<std::string>() + " is outside the work dir",
              true,
              {{"violations", json::array({{{"layer", "dispatcher"},
                                            {"op", c.name},
                                            {"path", in["path"]},
                                            {"errno", "EACCES"},
                                            {"detail", "outside the work dir"}}})}}};
    }
    if (c.name == "read_file") {
      fs::path p = fs::path(root_) / in["path"].get<std::string>();
      if (!fs::exists(p)) return {"no such file: " + in["path"].get<std::string>(), true};
      return {read_file(p)};
    }
    if (c.name == "write_file") {
      fs::path p = fs::path(root_) / in["path"].get<std::string>();
      fs::create_directories(p.parent_path());
      write_file_atomic(p, in["content"].get<std::string>());
      return {"wrote " + std::to_string(in["content"].get<std::string>().size()) + " bytes"};
    }
    if (c.name == "list_dir") {
      std::string out;
      for (auto& e : fs::directory_iterator(fs::path(root_) / in["path"].get<std::string>())) {
        out += e.path().filename().string() + "\n";
      }
      return {out};
    }
    if (c.name == "run" || c.name == "run_on_chip") {
      std::vector<std::string> argv = {"env", "-C", root_};
      for (auto& a : in["command"])
        argv.push_back(a);
      auto r = kd::test::run_process(argv);
      run_outputs.push_back(r.out);
      return {r.out + r.err, r.exit_code != 0, {{"exit_code", r.exit_code}, {"signal", r.signal}}};
    }
    if (c.name == "git_diff") return {git({"diff"}).out};
    if (c.name == "commit") {
      git({"add", "-A"});
      auto r = git({"commit", "-q", "-m", in["message"].get<std::string>()});
      if (r.exit_code != 0) return {"commit failed: " + r.err + r.out, true};
      std::string sha = git({"rev-parse", "HEAD"}).out;
      sha.pop_back();
      return {json{{"sha", sha}}.dump()};
    }
    if (c.name == "finish") return {"finish accepted", false, json::object(), true};
    return {"not supported by this host: " + c.name, true};
  }

 private:
  bool inside(const json& p) {
    std::string s = p.get<std::string>();
    return !s.empty() && s[0] != '/' && s.find("..") == std::string::npos;
  }
  kd::test::ProcessResult git(std::vector<std::string> args) {
    std::vector<std::string> argv = {"git", "-C", root_};
    argv.insert(argv.end(), args.begin(), args.end());
    return kd::test::run_process(argv);
  }
  std::string root_;
};

const char* kLedger =
    "loaded: [index#category-strategy, pallas-kernel#mechanics, BRIEFS#1]\\n"
    "| candidate | class | committed SHA | parity (max abs / max rel) | p50 ms (author-side) | vs "
    "naive | receipt | why kept/rejected |\\n"
    "|---|---|---|---|---|---|---|---|\\n"
    "| cand1 | kernel-authored | {{result.commit1.sha}} | 1e-3 / 2e-3 | 1.20 | 1.05x | "
    "raw/profiles/t/rms-v001/author/cand1.json | kept as the base |\\n"
    "| cand2 | kernel-authored | {{result.commit2.sha}} | 1e-3 / 2e-3 | 1.10 | 1.15x | "
    "raw/profiles/t/rms-v001/author/cand2.json | fused; fastest |";

std::string honest_script(bool with_rejected_finish) {
  std::string finish_ok =
      std::string(R"({"id":"fin2","name":"finish","input":{"ledger":")") + kLedger +
      R"(","final_candidate":{"path":"kern/cand2.py","sha":"{{result.commit2.sha}}"},
        "mechanism":"Fuses the two passes into one VMEM-resident loop.","escalations":[],"blockers":[],
        "abandoned":[{"candidate":"cand3","reason":"stop rule: cand2 met the plan's prediction"}],"compliance":"no-peek obeyed"}})";
  std::string finish_bad =
      std::string(R"({"id":"fin1","name":"finish","input":{"ledger":")") + kLedger +
      R"(","final_candidate":{"path":"kern/cand2.py","sha":"{{result.commit2.sha}}"},
        "mechanism":"The hypothesis is supported.","escalations":[],"blockers":[],"compliance":"ok"}})";
  std::string s = R"({"turns":[
    {"text":"Writing cand1.","tool_calls":[{"id":"w1","name":"write_file","input":{"path":"kern/cand1.py","content":"print('cand1')\n"}},
                                          {"id":"r1","name":"run","input":{"command":["cat","kern/cand1.py"]}}]},
    {"tool_calls":[{"id":"commit1","name":"commit","input":{"message":"cand1(rms v001): tiled kernel — author-side 1.05x"}}]},
    {"text":"Now cand2 on the chip.","tool_calls":[{"id":"w2","name":"write_file","input":{"path":"kern/cand2.py","content":"print('cand2')\n"}},
                                          {"id":"r2","name":"run_on_chip","input":{"command":["sh","-c","echo timed"]}}]},
    {"tool_calls":[{"id":"commit2","name":"commit","input":{"message":"cand2(rms v001): fused loop — author-side 1.15x"}}]},)";
  if (with_rejected_finish) s += R"({"tool_calls":[)" + finish_bad + "]},";
  s += R"({"text":"Done.","tool_calls":[)" + finish_ok + "]}]}";
  return s;
}

class SessionTest : public testing::Test {
 protected:
  SessionResult run(const std::string& script, ModelConfig model = {}, Budgets budgets = {}) {
    write_file_atomic(dir_ / "script.json", script);
    if (model.provider == "fake") model.script = dir_ / "script.json";
    ModelHandle h = open_model(model, ProvidersPolicy::load(policy_file("providers.json")));
    if (!h.fake) {
      fake_ = std::make_shared<FakeServer>(FakeScript::parse(script, "script"));
      h.endpoint.base_url = fake_->base_url();
    }
    server_ = h.fake ? h.fake : fake_;
    SessionConfig cfg;
    cfg.session_id = "s1";
    cfg.system_prompt = "brief";
    cfg.first_user_message = "author the family";
    cfg.tools = author_tools();
    cfg.budgets = budgets;
    cfg.transcript_dir = dir_ / "run" / "author";
    cfg.header = {{"family", "rms"}, {"experiment", "v001"}};
    cfg.finish.plan_ids = {"cand1", "cand2", "cand3"};
    cfg.finish.compliance_required = true;
    cfg.retry.base = std::chrono::milliseconds(5);
    cfg.on_text = [this](std::string_view piece) { streamed_ += piece; };
    boost::asio::thread_pool pool(1);
    auto r = test::run_sync(io_, run_session(cfg, host_, http_, h, pool));
    pool.join();
    return r;
  }
  std::vector<json> records() {
    std::vector<json> out;
    std::ifstream in(dir_ / "run" / "author" / "transcript.jsonl");
    for (std::string line; std::getline(in, line);)
      out.push_back(json::parse(line));
    return out;
  }

  kd::test::TempDir tmp_;
  fs::path dir_ = tmp_.path();
  DirHost host_{tmp_ / "wt"};
  boost::asio::io_context io_;
  HttpClient http_{io_.get_executor()};
  std::shared_ptr<FakeServer> fake_, server_;
  std::string streamed_;
};

TEST_F(SessionTest, HonestAuthorFinishesAfterARejectedFinish) {
  SessionResult r = run(honest_script(true));
  ASSERT_EQ(to_string(r.end_reason), "finished") << records().rbegin()[1].dump();
  ASSERT_TRUE(r.finish);
  EXPECT_EQ(r.turns, 6);
  EXPECT_EQ(r.tool_calls, 8);
  EXPECT_EQ(streamed_, "Writing cand1.Now cand2 on the chip.Done.")
      << "text streamed to the observer";
  EXPECT_EQ(r.input_tokens, 600);
  EXPECT_EQ(r.output_tokens, 120);
  std::string sha2 = (*r.finish)["final_candidate"]["sha"];
  ASSERT_EQ(sha2.size(), 40u) << "the scripted finish cites the real commit SHA";
  auto log = kd::test::run_process({"git", "-C", tmp_ / "wt", "log", "--format=%H %s"});
  EXPECT_NE(log.out.find(sha2 + " cand2(rms v001)"), std::string::npos) << log.out;

  contract::ChainReport rep =
      contract::verify_chain_file(dir_ / "run" / "author" / "transcript.jsonl");
  ASSERT_TRUE(rep.ok) << rep.reason;
  EXPECT_EQ(rep.head, r.transcript_head);
  auto recs = records();
  EXPECT_EQ(recs.front()["type"], "header");
  EXPECT_EQ(recs.front()["data"]["model"]["provider"], "fake");
  EXPECT_EQ(recs.back()["type"], "end");
  EXPECT_EQ(recs.back()["data"]["reason"], "finished");
  // The rejected finish told the model exactly what to fix.
  bool saw_rejection = false;
  for (const auto& rec : recs) {
    if (rec["type"] == "tool_result" && rec["data"]["name"] == "finish" &&
        rec["data"]["is_error"] == true) {
      std::string c = rec["data"]["content"];
      EXPECT_NE(c.find("candidate plan item cand3"), std::string::npos) << c;
      EXPECT_NE(c.find("verdict language (supported)"), std::string::npos) << c;
      saw_rejection = true;
    }
  }
  EXPECT_TRUE(saw_rejection);
}

TEST_F(SessionTest, OpenAIWireThroughTheWholeLoop) {
  ModelConfig m;
  m.provider = "openai";
  m.model = "gpt-4.1";
  m.base_url = "http://127.0.0.1:1/v1";  // replaced by the test server; a local server needs no key
  SessionResult r = run(honest_script(false), m);
  ASSERT_EQ(to_string(r.end_reason), "finished") << records().rbegin()[1].dump();
  EXPECT_EQ(r.turns, 5);
  EXPECT_NEAR(r.cost_usd, 5 * (100 * 2.0 + 20 * 8.0) / 1e6, 1e-12);
  auto seen = server_->requests();
  ASSERT_EQ(seen.size(), 5u);
  EXPECT_EQ(seen[0].wire, "openai");
  EXPECT_EQ(seen[0].headers.count("authorization"), 0u);
  EXPECT_TRUE(contract::verify_chain_file(dir_ / "run" / "author" / "transcript.jsonl").ok);
}

TEST_F(SessionTest, BadArgumentsBecomeToolErrorsAndTheSessionGoesOn) {
  SessionResult r = run(R"({"turns":[
    {"tool_calls":[{"id":"a","name":"read_file","input":{"path":7}},{"id":"b","name":"run","arguments_raw":"{command: ls"},
                   {"id":"c","name":"launch_missiles","input":{}},{"id":"d","name":"write_file","input":{"path":"x","content":"y","mode":"0777"}}]},
    {"text":"I give up."}]})");
  EXPECT_EQ(to_string(r.end_reason), "provider:http_400:invalid_request_error")
      << "script ends after the nudge";
  std::vector<std::string> errors;
  for (const auto& rec : records()) {
    if (rec["type"] == "tool_result") {
      EXPECT_EQ(rec["data"]["is_error"], true);
      errors.push_back(rec["data"]["content"]);
    }
  }
  ASSERT_EQ(errors.size(), 4u);
  EXPECT_NE(errors[0].find("path must be a string, got integer"), std::string::npos) << errors[0];
  EXPECT_NE(errors[1].find("not a JSON object"), std::string::npos) << errors[1];
  EXPECT_NE(errors[2].find("unknown tool launch_missiles"), std::string::npos) << errors[2];
  EXPECT_NE(errors[3].find("mode is not an argument of this tool"), std::string::npos) << errors[3];
}

TEST_F(SessionTest, EndingWithoutFinishIsNamed) {
  SessionResult r = run(R"({"turns":[{"text":"a"},{"text":"b"},{"text":"c"}]})");
  EXPECT_EQ(to_string(r.end_reason), "ended_without_finish");
  EXPECT_FALSE(r.finish);
  EXPECT_EQ(r.turns, 3);
}

TEST_F(SessionTest, TurnBudget) {
  Budgets b;
  b.max_turns = 2;
  SessionResult r = run(honest_script(false), {}, b);
  EXPECT_EQ(to_string(r.end_reason), "budget:turns");
  EXPECT_EQ(r.turns, 2);
  EXPECT_TRUE(contract::verify_chain_file(dir_ / "run" / "author" / "transcript.jsonl").ok);
}

TEST_F(SessionTest, CostBudgetReservesTheWorstCaseOfTheNextCall) {
  ModelConfig m;
  m.provider = "anthropic";
  m.model = "claude-sonnet-4-5";
  m.base_url = "http://127.0.0.1:1";  // replaced by the test server below
  m.max_tokens = 20;
  Budgets b;
  // Each turn: 2000 in * $3/M + 20 out * $15/M = 6300 micro-dollars. Checked only after the
  // fact, the budget would allow a fourth turn and end at 25200.
  b.max_cost_usd = 0.022;
  std::string turn =
      R"({"tool_calls":[{"name":"list_dir","input":{"path":"."}}],"usage":{"input_tokens":2000,"output_tokens":20}})";
  SessionResult r =
      run("{\"turns\":[" + turn + "," + turn + "," + turn + "," + turn + "," + turn + "]}", m, b);
  EXPECT_EQ(to_string(r.end_reason), "budget:cost");
  EXPECT_GE(r.turns, 1);
  EXPECT_EQ(r.cost_microusd, r.turns * 6300L);
  EXPECT_NEAR(r.cost_usd, r.turns * 0.0063, 1e-12);
  EXPECT_LE(r.cost_microusd, 22'000) << "the budget is never overshot";
  bool reserved = false;
  for (const auto& rec : records()) {
    if (rec["type"] != "note") continue;
    std::string text = rec["data"]["text"];
    long worst = 0, left = 0;
    if (std::sscanf(text.c_str(), "the next call could cost up to %ld micro-dollars; %ld", &worst,
                    &left) == 2) {
      reserved = true;
      EXPECT_EQ(left, 22'000 - r.cost_microusd);
      EXPECT_GT(worst, left);
      EXPECT_GE(worst, 2000 * 6 + 20 * 15) << "input at the 1-hour write price, output at max";
    }
  }
  EXPECT_TRUE(reserved);
}

TEST_F(SessionTest, AnUnpricedModelWithACostBudgetIsRefusedAtStart) {
  ModelConfig m;
  m.provider = "anthropic";
  m.model = "claude-unknown-9";
  m.base_url = "http://127.0.0.1:1";
  EXPECT_FALSE(ProvidersPolicy::load(policy_file("providers.json")).has_price("claude-unknown-9"));
  try {
    run(honest_script(false), m);
    ADD_FAILURE() << "started without a price";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no price for model \"claude-unknown-9\""),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(server_->answered(), 0u);
}

TEST_F(SessionTest, CheatingAuthorIsRecordedWithViolations) {
  SessionResult r = run(R"({"turns":[
    {"tool_calls":[{"id":"x1","name":"write_file","input":{"path":"../reference/ref.py","content":"return fast"}},
                   {"id":"x2","name":"read_file","input":{"path":"/wiki/no-peek/answer.py"}}]},
    {"tool_calls":[{"id":"f","name":"finish","input":{"ledger":"| cand1 | x |","final_candidate":{"path":"k.py","sha":"abc1234"},
        "mechanism":"3x faster","escalations":[],"blockers":[],"compliance":""}}]},
    {"text":"done"},{"text":"done"},{"text":"done"}]})");
  EXPECT_EQ(to_string(r.end_reason), "ended_without_finish");
  int violations = 0;
  for (const auto& rec : records()) {
    if (rec["type"] == "violation") {
      ++violations;
      EXPECT_EQ(rec["data"]["layer"], "dispatcher");
      EXPECT_FALSE(rec["data"]["tool_call_id"].get<std::string>().empty());
    }
  }
  EXPECT_EQ(violations, 2);
}

TEST_F(SessionTest, ApiKeyNeverReachesTranscriptsRunDirsOrChildren) {
  const std::string key = "sk-ant-test-SECRET-4242-abcdefgh";
  ::setenv("ANTHROPIC_API_KEY", key.c_str(), 1);
  ModelConfig m;
  m.provider = "anthropic";
  m.model = "claude-sonnet-4-5";
  m.base_url = "http://127.0.0.1:1";
  SessionResult r = run(
      std::string(R"({"turns":[{"tool_calls":[{"id":"e","name":"run","input":{"command":["env"]}},
      {"id":"w","name":"write_file","input":{"path":"k.txt","content":"key )") +
          key + R"("}}]},{"text":"x"},{"text":"x"},{"text":"x"}]})",
      m);
  EXPECT_EQ(to_string(r.end_reason), "ended_without_finish");
  auto seen = server_->requests();
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen[0].headers["x-api-key"], key) << "the key did go to the provider";
  ASSERT_EQ(host_.run_outputs.size(), 1u);
  EXPECT_NE(host_.run_outputs[0].find("PATH="), std::string::npos);
  EXPECT_EQ(host_.run_outputs[0].find(key), std::string::npos) << "a child inherited the key";
  EXPECT_EQ(std::getenv("ANTHROPIC_API_KEY"), nullptr);
  for (auto& e : fs::recursive_directory_iterator(dir_ / "run")) {
    if (!e.is_regular_file()) continue;
    std::string text = read_file(e.path());
    EXPECT_EQ(text.find(key), std::string::npos) << e.path();
    if (e.path().filename() == "transcript.jsonl") {
      EXPECT_NE(text.find("[REDACTED]"), std::string::npos);
    }
  }
}

TEST_F(SessionTest, MissingKeyIsRefusedNamingTheVariable) {
  ::unsetenv("OPENAI_API_KEY");
  ModelConfig m;
  m.provider = "openai";
  try {
    open_model(m, ProvidersPolicy::load(policy_file("providers.json")));
    FAIL() << "expected kd::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("OPENAI_API_KEY is not set"), std::string::npos)
        << e.what();
  }
}

TEST_F(SessionTest, ProviderFailureEndsTheSessionWithItsReason) {
  SessionResult r = run(R"({"turns":[{"text":"x","faults":[{"kind":"status","status":401}]}]})");
  EXPECT_EQ(to_string(r.end_reason), "provider:http_401:authentication_error");
  auto recs = records();
  EXPECT_EQ(recs.back()["data"]["reason"], "provider:http_401:authentication_error");
  EXPECT_TRUE(contract::verify_chain_file(dir_ / "run" / "author" / "transcript.jsonl").ok);
}

}  // namespace
}  // namespace kd::agents
