// The file channel of supervision: a session thread asks, the test answers by writing files the
// way `kdispatch mcp` (or a person with an editor) does.
#include "dispatcher/file_supervisor.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "common/errors.h"
#include "common/files.h"
#include "tests/support/process.h"

namespace kd::dispatcher {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace std::chrono_literals;

// Waits for a file the session writes (generous: a sanitizer build on a busy host).
bool appears(const fs::path& p) {
  for (int i = 0; i < 3000; ++i) {
    if (fs::exists(p)) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

ApprovalRequest run_request(std::string id, std::vector<std::string> argv) {
  return {"run", std::move(id), std::move(argv), ""};
}

TEST(FileSupervisor, AnswersThroughFilesAndAMalformedOneIsRefusedWhileTheRequestStaysPending) {
  test::TempDir tmp;
  const fs::path dir = fs::path(tmp.path()) / "supervision";
  FileSupervisor sup(dir, "rms-norm/v002");
  sup.turn(3);
  sup.show("I will measure cand1 now.");
  auto asked = std::async(std::launch::async, [&] {
    return sup.decide(run_request("m1", {"bash", "-c", "kverify verify --mode screen"}));
  });
  ASSERT_TRUE(appears(dir / "pending/m1.json"));
  const json req = json::parse(read_file(dir / "pending/m1.json"));
  EXPECT_EQ(req["call_id"], "m1");
  EXPECT_EQ(req["tool"], "run");
  EXPECT_EQ(req["turn"], 3);
  EXPECT_EQ(req["experiment"], "rms-norm/v002");
  EXPECT_EQ(req["command"], json::array({"bash", "-c", "kverify verify --mode screen"}));
  EXPECT_EQ(req["shown"], "    bash -c 'kverify verify --mode screen'\n");
  EXPECT_EQ(req["model_text"], "I will measure cand1 now.");

  // A denial without its reason: refused, said in errors/, and the request is still pending.
  write_file_atomic(dir / "decisions/m1.json", R"({"decision": "deny"})");
  ASSERT_TRUE(appears(dir / "errors/m1.json"));
  const std::string refused = json::parse(read_file(dir / "errors/m1.json"))["error"];
  EXPECT_NE(refused.find("missing field \"reason\""), std::string::npos) << refused;
  EXPECT_NE(refused.find("decisions/m1.json"), std::string::npos) << refused;
  EXPECT_EQ(asked.wait_for(200ms), std::future_status::timeout) << "a malformed answer was taken";
  EXPECT_TRUE(fs::exists(dir / "pending/m1.json"));
  EXPECT_FALSE(fs::exists(dir / "decisions/m1.json"));

  // Not JSON at all: refused the same way.
  fs::remove(dir / "errors/m1.json");
  write_file_atomic(dir / "decisions/m1.json", "approve");
  ASSERT_TRUE(appears(dir / "errors/m1.json"));
  EXPECT_NE(read_file(dir / "errors/m1.json").find("not JSON"), std::string::npos);

  ASSERT_TRUE(post_supervision_answer(
      dir, "m1",
      {{"decision", "approve_prefix"}, {"prefix_words", 2}, {"notes", {"check the ledger"}}}));
  ASSERT_EQ(asked.wait_for(30s), std::future_status::ready);
  const Decision d = asked.get();
  EXPECT_TRUE(d.approved);
  EXPECT_EQ(d.notes, std::vector<std::string>{"check the ledger"});
  ASSERT_EQ(d.records.size(), 2u);
  EXPECT_EQ(d.records[0]["decision"], "note");
  EXPECT_EQ(d.records[1]["decision"], "prefix_approved");
  EXPECT_EQ(d.records[1]["prefix"], json::array({"bash", "-c"}));
  EXPECT_EQ(d.records[1]["by"], "file");
  EXPECT_FALSE(fs::exists(dir / "pending/m1.json"));
  EXPECT_FALSE(fs::exists(dir / "errors/m1.json"));
  EXPECT_EQ(json::parse(read_file(dir / "decided/m1.json"))["answer"]["decision"],
            "approve_prefix");

  // The prefix approves the next matching command without a request; decided/ says so.
  const Decision by_prefix = sup.decide(run_request("m2", {"bash", "-c", "other"}));
  EXPECT_TRUE(by_prefix.approved);
  EXPECT_EQ(by_prefix.records[0]["decision"], "approved_by_prefix");
  EXPECT_FALSE(fs::exists(dir / "pending/m2.json"));
  EXPECT_EQ(json::parse(read_file(dir / "decided/m2.json"))["answer"]["decision"],
            "approved_by_prefix");
}

TEST(FileSupervisor, CommitsAreDeniedOrStoppedAndOddCallIdsGetSafeNames) {
  test::TempDir tmp;
  const fs::path dir = fs::path(tmp.path()) / "supervision";
  FileSupervisor sup(dir, "rms-norm/v002");
  const std::string odd = "../../etc/passwd";
  const std::string name = supervision_call_name(odd);
  EXPECT_EQ(name.rfind("call-", 0), 0u) << name;
  EXPECT_EQ(name.size(), 21u);
  auto asked = std::async(std::launch::async, [&] {
    return sup.decide({"commit", odd, {}, "cand1: one pass"});
  });
  ASSERT_TRUE(appears(dir / "pending" / (name + ".json")));
  const json req = json::parse(read_file(dir / "pending" / (name + ".json")));
  EXPECT_EQ(req["model_call_id"], odd);
  EXPECT_EQ(req["message"], "cand1: one pass");
  // A prefix approves commands, not commits.
  EXPECT_THROW(parse_supervision_answer({{"decision", "approve_prefix"}}, "commit", 0, "x"), Error);
  ASSERT_TRUE(post_supervision_answer(dir, name, {{"decision", "stop"}}));
  ASSERT_EQ(asked.wait_for(30s), std::future_status::ready);
  const Decision d = asked.get();
  EXPECT_TRUE(d.stop);
  EXPECT_FALSE(d.approved);
  EXPECT_EQ(d.records[0]["decision"], "stopped");
  EXPECT_EQ(d.records[0]["message"], "cand1: one pass");
}

TEST(FileSupervisor, AnswersAreCheckedAgainstTheRequestAndNeverPostedOverAnother) {
  auto refusal = [](const json& doc, size_t words) {
    try {
      parse_supervision_answer(doc, "run", words, "decisions/c1.json");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(refusal({{"decision", "deny"}, {"reason", "not yet"}}, 2), "accepted");
  EXPECT_NE(refusal({{"decision", "deny"}, {"reason", "  "}}, 2).find("\"reason\""),
            std::string::npos);
  EXPECT_NE(refusal({{"decision", "approve"}, {"reason", "x"}}, 2).find("for deny only"),
            std::string::npos);
  EXPECT_NE(refusal({{"decision", "approve_prefix"}, {"prefix_words", 3}}, 2).find("prefix_words"),
            std::string::npos);
  EXPECT_NE(refusal({{"decision", "approve"}, {"prefix_words", 1}}, 2).find("approve_prefix only"),
            std::string::npos);
  EXPECT_NE(refusal({{"decision", "maybe"}}, 2).find("\"decision\""), std::string::npos);
  EXPECT_NE(refusal({{"decision", "approve"}, {"by", "me"}}, 2).find("unknown field \"by\""),
            std::string::npos);
  EXPECT_NE(refusal({{"decision", "approve"}, {"notes", {""}}}, 2).find("notes"),
            std::string::npos);

  test::TempDir tmp;
  make_supervision_dir(fs::path(tmp.path()));
  EXPECT_TRUE(post_supervision_answer(fs::path(tmp.path()), "c1", {{"decision", "approve"}}));
  EXPECT_FALSE(post_supervision_answer(fs::path(tmp.path()), "c1", {{"decision", "stop"}}));
  EXPECT_EQ(json::parse(read_file(fs::path(tmp.path()) / "decisions/c1.json"))["decision"],
            "approve");
  size_t files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(fs::path(tmp.path()) / "decisions"))
    ++files;
  EXPECT_EQ(files, 1u) << "a refused post left its temporary file";
}

}  // namespace
}  // namespace kd::dispatcher
