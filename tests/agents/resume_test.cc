// Resuming a session from its transcript (docs/dispatcher.md): a session against the fake server is
// cut after every record and in the middle of lines, as a kill -9 would leave it, and resumed; the
// resumed transcript verifies, no complete turn is asked or run twice, and the finish is the
// one of the uninterrupted run.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>

#include "agents/session.h"
#include "agents/tools.h"
#include "agents/transcript_resume.h"
#include "common/errors.h"
#include "common/files.h"
#include "common/policy_path.h"
#include "common/sha256.h"
#include "contract/transcript_chain.h"
#include "tests/agents/test_util.h"
#include "tests/support/process.h"

namespace kd::agents {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

// Answers every call from its arguments alone, so a resumed run sees the same results as the
// uninterrupted one, and records the ids it was asked to run.
class RecordingHost : public ToolHost {
 public:
  ToolOutcome call(const ToolCall& c) override {
    {
      std::lock_guard l(mu_);
      calls_.push_back(c.id);
    }
    if (c.name == "commit") {
      return {
          json{{"sha", sha256_hex(c.input["message"].get<std::string>()).substr(0, 40)}}.dump()};
    }
    if (c.name == "read_file") return {std::string(70 * 1024, 'r')};  // stored as a blob
    if (c.name == "finish") return {"finish accepted", false, json::object(), true};
    return {c.name + " " + c.input.dump() + " ok", false, {{"exit_code", 0}}};
  }
  std::vector<std::string> calls() const {
    std::lock_guard l(mu_);
    return calls_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::string> calls_;
};

const char* kScript = R"({"turns":[
  {"text":"Starting.","tool_calls":[{"id":"w1","name":"write_file","input":{"path":"kern/cand1.py","content":"c1"}},
                                    {"id":"r1","name":"run","input":{"command":["cat","kern/cand1.py"]}}]},
  {"text":"Thinking it over."},
  {"tool_calls":[{"id":"b1","name":"read_file","input":{"path":"big.log"}},
                 {"id":"c1","name":"commit","input":{"message":"cand1(rms v001): tiled — author-side 1.05x"}}]},
  {"text":"cand2.","tool_calls":[{"id":"w2","name":"write_file","input":{"path":"kern/cand2.py","content":"c2"}},
                                 {"id":"x2","name":"run_on_chip","input":{"command":["sh","-c","echo timed"]}},
                                 {"id":"c2","name":"commit","input":{"message":"cand2(rms v001): fused — author-side 1.15x"}}]},
  {"text":"Done.","tool_calls":[{"id":"f","name":"finish","input":{
    "ledger":"loaded: [index#category-strategy, pallas-kernel#mechanics]\n| candidate | class | committed SHA | parity (max abs / max rel) | p50 ms (author-side) | vs naive | receipt | why kept/rejected |\n|---|---|---|---|---|---|---|---|\n| cand1 | kernel-authored | {{result.c1.sha}} | 1e-3 / 2e-3 | 1.20 | 1.05x | raw/profiles/t/rms-v001/author/cand1.json | base |\n| cand2 | kernel-authored | {{result.c2.sha}} | 1e-3 / 2e-3 | 1.10 | 1.15x | raw/profiles/t/rms-v001/author/cand2.json | fastest |",
    "final_candidate":{"path":"kern/cand2.py","sha":"{{result.c2.sha}}"},
    "mechanism":"One VMEM-resident loop.","escalations":[],"blockers":[],"compliance":""}}]}
]})";
constexpr size_t kScriptTurns = 5;
const std::vector<std::string> kScriptCalls = {"w1", "r1", "b1", "c1", "w2", "x2", "c2", "f"};

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  for (size_t pos = 0, nl; pos < text.size(); pos = nl + 1) {
    nl = text.find('\n', pos);
    out.push_back(text.substr(pos, nl - pos));
  }
  return out;
}

struct Outcome {
  SessionResult result;
  size_t answered = 0;
  std::vector<std::string> host_calls;
  std::vector<int> turn_callbacks;
};

class ResumeTest : public testing::TestWithParam<std::string> {
 protected:
  SessionConfig config(const fs::path& dir, bool resume) {
    SessionConfig cfg;
    cfg.session_id = "rms-v001-author";
    cfg.system_prompt = "brief";
    cfg.first_user_message = "author the family";
    cfg.tools = author_tools();
    cfg.transcript_dir = dir;
    cfg.header = {{"family", "rms"}, {"experiment", "v001"}};
    cfg.finish.plan_ids = {"cand1", "cand2"};
    cfg.retry.base = std::chrono::milliseconds(5);
    cfg.resume = resume;
    return cfg;
  }

  Outcome run(SessionConfig cfg) {
    FakeServer server(FakeScript::parse(kScript, "script"));
    ModelConfig m;
    m.provider = GetParam();
    m.model = "fake-author";
    m.base_url = "http://127.0.0.1:1";  // replaced by the server's below
    ModelHandle h = open_model(m, ProvidersPolicy::load(policy_file("providers.json")));
    h.endpoint.base_url = server.base_url();
    RecordingHost host;
    Outcome out;
    cfg.on_turn = [&](const SessionResult& so_far) {
      out.turn_callbacks.push_back(so_far.turns);
      // The turn is on disk before the dispatcher hears of it.
      std::string text = read_file(cfg.transcript_dir / "transcript.jsonl");
      json last = json::parse(lines_of(text).back());
      EXPECT_EQ(last["hash"], so_far.transcript_head);
    };
    boost::asio::io_context io;
    HttpClient http(io.get_executor());
    boost::asio::thread_pool pool(1);
    out.result = test::run_sync(io, run_session(cfg, host, http, h, pool));
    pool.join();
    out.answered = server.answered();
    out.host_calls = host.calls();
    return out;
  }

  // The uninterrupted run, once per test.
  void SetUp() override {
    ref_ = run(config(tmp_ / "ref", false));
    ASSERT_EQ(to_string(ref_.result.end_reason), "finished")
        << read_file(tmp_ / "ref/transcript.jsonl");
    ASSERT_TRUE(ref_.result.finish);
    ASSERT_EQ(ref_.answered, kScriptTurns);
    ref_text_ = read_file(tmp_ / "ref/transcript.jsonl");
    ref_lines_ = lines_of(ref_text_);
  }

  // A copy of the reference run's directory whose transcript holds `text`.
  fs::path crashed(const std::string& name, const std::string& text) {
    fs::path dir = tmp_ / name;
    fs::create_directories(dir);
    fs::copy(tmp_ / "ref/blobs", dir / "blobs");
    std::ofstream(dir / "transcript.jsonl", std::ios::binary) << text;
    return dir;
  }

  // Resumes the transcript cut to `text` and checks everything the resume promises; returns
  // the number of turns dropped.
  size_t resume_and_check(const std::string& name, const std::string& text) {
    SCOPED_TRACE(name);
    size_t complete = text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1;
    size_t torn = text.size() - complete;
    std::vector<json> prefix;
    for (const auto& l : lines_of(text.substr(0, complete)))
      prefix.push_back(json::parse(l));
    fs::path dir = crashed(name, text);
    Outcome r = run(config(dir, true));

    EXPECT_EQ(to_string(r.result.end_reason), "finished");
    if (!r.result.finish) {
      ADD_FAILURE() << "no finish";
      return 0;
    }
    EXPECT_EQ(*r.result.finish, *ref_.result.finish) << "the same finish as without the crash";
    contract::ChainReport rep = contract::verify_chain_file(dir / "transcript.jsonl");
    EXPECT_TRUE(rep.ok) << rep.reason << " at line " << rep.broken_line;
    EXPECT_EQ(rep.head, r.result.transcript_head);

    std::vector<json> recs;
    for (const auto& l : lines_of(read_file(dir / "transcript.jsonl")))
      recs.push_back(json::parse(l));
    EXPECT_GT(recs.size(), prefix.size());
    for (size_t i = 0; i < prefix.size() && i < recs.size(); ++i)
      EXPECT_EQ(recs[i], prefix[i]) << "record " << i << " kept as it was";

    size_t dropped = 0;
    std::set<std::string> dropped_calls;
    std::set<std::string> dropped_turn_calls;  // every call of the dropped response
    if (!prefix.empty()) {
      const json& note = recs.at(prefix.size());
      EXPECT_EQ(note["type"], "note");
      if (!note["data"].contains("resumed")) {
        ADD_FAILURE() << "no resume note: " << note.dump();
        return 0;
      }
      const json& rd = note["data"]["resumed"];
      EXPECT_EQ(rd["after_seq"], prefix.size() - 1);
      EXPECT_EQ(rd["torn_bytes"], torn);
      dropped = rd["dropped_turns"];
      for (const auto& id : rd["dropped_calls"])
        dropped_calls.insert(id);
      if (dropped == 1) {
        for (auto it = prefix.rbegin(); it != prefix.rend(); ++it) {
          if ((*it)["type"] != "response") continue;
          for (const auto& c : (*it)["data"]["tool_calls"])
            dropped_turn_calls.insert(c["id"]);
          break;
        }
      }
    } else {
      EXPECT_EQ(recs.front()["type"], "header") << "nothing survived: a fresh start";
    }
    EXPECT_LE(dropped, 1u);

    // Requests: the turns answered before the crash (their responses are recorded) and after.
    size_t answered_before = 0;
    std::vector<std::string> ran_before;
    for (const auto& p : prefix) {
      if (p["type"] == "response") ++answered_before;
      if (p["type"] == "tool_call") ran_before.push_back(p["data"]["id"]);
    }
    EXPECT_EQ(answered_before + r.answered, kScriptTurns + dropped);
    EXPECT_LE(answered_before + r.answered, kScriptTurns + 1);

    // Tool calls: each scripted call ran, and only the dropped turn's calls may have run twice.
    std::map<std::string, int> seen;
    for (const auto& id : ran_before)
      ++seen[id];
    for (const auto& id : r.host_calls)
      ++seen[id];
    for (const auto& id : kScriptCalls) {
      EXPECT_GE(seen[id], 1) << id << " never ran";
      if (seen[id] > 1) {
        EXPECT_EQ(seen[id], 2) << id;
        EXPECT_TRUE(dropped_turn_calls.count(id)) << id << " ran twice outside a dropped turn";
      }
    }
    for (const auto& id : dropped_calls)
      EXPECT_TRUE(dropped_turn_calls.count(id)) << id;

    // Budgets are per session: the dropped turn was paid for.
    EXPECT_EQ(r.result.turns, ref_.result.turns + static_cast<int>(dropped));
    EXPECT_EQ(r.result.input_tokens, ref_.result.input_tokens + 100 * static_cast<long>(dropped));
    EXPECT_EQ(r.result.output_tokens, ref_.result.output_tokens + 20 * static_cast<long>(dropped));
    return dropped;
  }

  kd::test::TempDir tmp_;
  Outcome ref_;
  std::string ref_text_;
  std::vector<std::string> ref_lines_;
};

TEST_P(ResumeTest, TurnCallbacksFollowCompleteTurns) {
  EXPECT_EQ(ref_.turn_callbacks, (std::vector<int>{1, 2, 3, 4, 5}));
  EXPECT_EQ(ref_.host_calls, kScriptCalls);
  EXPECT_EQ(ref_.result.tool_calls, 8);
  json header = json::parse(ref_lines_.front());
  EXPECT_EQ(header["data"]["first_user_message_sha256"], sha256_hex("author the family"));
}

TEST_P(ResumeTest, CutAfterEveryRecord) {
  std::string text;
  size_t dropped = 0;
  for (size_t k = 0; k + 1 < ref_lines_.size(); ++k) {
    text += ref_lines_[k] + "\n";
    dropped += resume_and_check("cut" + std::to_string(k + 1), text);
  }
  // Each scripted call has two cuts inside its turn: just before its tool_call record and just
  // after it.
  EXPECT_EQ(dropped, 2 * kScriptCalls.size());
}

TEST_P(ResumeTest, CutInTheMiddleOfALine) {
  std::string text;
  for (size_t k = 0; k < ref_lines_.size(); ++k) {
    resume_and_check("torn" + std::to_string(k),
                     text + ref_lines_[k].substr(0, ref_lines_[k].size() / 2));
    std::string whole_but_newline = text + ref_lines_[k];
    if (k % 4 == 0) resume_and_check("nonl" + std::to_string(k), whole_but_newline);
    text += ref_lines_[k] + "\n";
  }
}

TEST_P(ResumeTest, AnEndedSessionGivesItsRecordedResult) {
  fs::path dir = crashed("ended", ref_text_);
  Outcome r = run(config(dir, true));
  EXPECT_EQ(r.answered, 0u) << "the model is not called";
  EXPECT_TRUE(r.host_calls.empty());
  EXPECT_EQ(to_string(r.result.end_reason), "finished");
  EXPECT_EQ(*r.result.finish, *ref_.result.finish);
  EXPECT_EQ(r.result.turns, ref_.result.turns);
  EXPECT_EQ(r.result.tool_calls, ref_.result.tool_calls);
  EXPECT_EQ(r.result.input_tokens, ref_.result.input_tokens);
  EXPECT_EQ(r.result.transcript_head, ref_.result.transcript_head);
  EXPECT_EQ(read_file(dir / "transcript.jsonl"), ref_text_) << "nothing appended";
}

TEST_P(ResumeTest, RebuiltConversationIsTheOneTheModelSaw) {
  // Cut before the finish turn: the rebuilt request must be byte for byte the one the
  // uninterrupted run sent for that turn.
  size_t last_request = 0;
  for (size_t i = 0; i < ref_lines_.size(); ++i) {
    if (json::parse(ref_lines_[i])["type"] == "request") last_request = i;
  }
  std::string text;
  for (size_t i = 0; i < last_request; ++i)
    text += ref_lines_[i] + "\n";
  fs::path dir = crashed("exact", text);
  Outcome r = run(config(dir, true));
  ASSERT_EQ(to_string(r.result.end_reason), "finished");
  // Linear request records carry the digest of the whole body they stand for.
  auto body_of = [](const json& rec) { return rec["data"]["sha256"].get<std::string>(); };
  auto recs = lines_of(read_file(dir / "transcript.jsonl"));
  json resent = json::parse(recs[last_request + 1]);  // after the resume note
  ASSERT_EQ(resent["type"], "request");
  EXPECT_EQ(body_of(resent), body_of(json::parse(ref_lines_[last_request])));
}

TEST_P(ResumeTest, TurnBudgetCarriesOver) {
  std::string text;
  int responses = 0;
  for (const auto& l : ref_lines_) {
    text += l + "\n";
    if (json::parse(l)["type"] == "tool_result" && responses == 3) break;
    if (json::parse(l)["type"] == "response") ++responses;
  }
  fs::path dir = crashed("budget", text);
  SessionConfig cfg = config(dir, true);
  cfg.budgets.max_turns = 3;
  Outcome r = run(cfg);
  EXPECT_EQ(to_string(r.result.end_reason), "budget:turns");
  EXPECT_EQ(r.answered, 0u);
  EXPECT_TRUE(contract::verify_chain_file(dir / "transcript.jsonl").ok);
}

TEST_P(ResumeTest, BrokenChainIsAnErrorNamingTheLine) {
  std::string text;
  for (size_t i = 0; i < 6; ++i)
    text += ref_lines_[i] + "\n";
  text[ref_lines_[0].size() + ref_lines_[1].size() + 2 + 30] ^= 0x01;  // line 3 edited
  fs::path dir = crashed("edited", text);
  try {
    run(config(dir, true));
    FAIL() << "expected kd::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("line 3"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("edited"), std::string::npos) << e.what();
  }
  EXPECT_EQ(read_file(dir / "transcript.jsonl"), text) << "left as found";
}

TEST_P(ResumeTest, AnotherBriefIsRefused) {
  fs::path dir = crashed("brief", ref_lines_[0] + "\n" + ref_lines_[1] + "\n");
  SessionConfig cfg = config(dir, true);
  cfg.first_user_message = "author another family";
  try {
    run(cfg);
    FAIL() << "expected kd::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("first_user_message_sha256"), std::string::npos)
        << e.what();
  }
}

TEST_P(ResumeTest, ATranscriptStillBeingWrittenIsRefused) {
  fs::path dir = tmp_ / "live";
  TranscriptWriter live(dir, "rms-v001-author", "author");
  live.append("header", {{"model", {{"provider", GetParam()}, {"name", "fake-author"}}},
                         {"system_sha256", sha256_hex("brief")},
                         {"first_user_message_sha256", sha256_hex("author the family")}});
  live.flush();
  try {
    run(config(dir, true));
    FAIL() << "expected kd::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("another process"), std::string::npos) << e.what();
  }
}

TEST_P(ResumeTest, AnEndRecordWithoutAnEndReasonIsRefusedNamingIt) {
  fs::path dir = tmp_ / "odd-end";
  {
    TranscriptWriter tw(dir, "rms-v001-author", "author");
    tw.append("header", {{"model", {{"provider", GetParam()}, {"name", "fake-author"}}},
                         {"system_sha256", sha256_hex("brief")},
                         {"first_user_message_sha256", sha256_hex("author the family")}});
    tw.append("end", {{"reason", "exploded"},
                      {"finish", nullptr},
                      {"turns", 0},
                      {"input_tokens", 0},
                      {"output_tokens", 0},
                      {"cost_usd", 0}});
    tw.flush();
  }
  try {
    run(config(dir, true));
    FAIL() << "expected kd::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("odd-end/transcript.jsonl"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("\"exploded\" is not an end reason"), std::string::npos)
        << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Wires, ResumeTest, testing::Values("anthropic", "openai"));

}  // namespace
}  // namespace kd::agents
