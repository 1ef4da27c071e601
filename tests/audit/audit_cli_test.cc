// `kdispatch audit` as a user runs it: three-line findings, summary, JSON and exit statuses.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "tests/support/fixtures.h"

namespace kd::test {
namespace {

TEST(AuditCli, CleanAdvisoryAndViolationExitStatuses) {
  TempDir dir;
  write_text(dir / "clean.jsonl", claude_tool_line("/w", "Read", {{"file_path", "/w/a.py"}}));
  auto clean = run_kdispatch({"audit", dir / "clean.jsonl"});
  EXPECT_EQ(clean.exit_code, 0) << clean.out << clean.err;
  EXPECT_NE(clean.out.find("ALL CLEAR"), std::string::npos);
  EXPECT_NE(clean.out.find("not checked: "), std::string::npos);

  write_text(dir / "drift.jsonl",
             claude_tool_line("/w", "Bash", {{"command", "git commit -m wip"}}));
  auto drift = run_kdispatch({"audit", dir / "drift.jsonl"});
  EXPECT_EQ(drift.exit_code, 1) << drift.out;
  EXPECT_NE(drift.out.find("FINDING [DRIFT] commit_grammar: "), std::string::npos) << drift.out;
  EXPECT_NE(drift.out.find("\nCORRECT: "), std::string::npos);
  EXPECT_NE(drift.out.find("\nRE-READ: "), std::string::npos);

  write_text(dir / "bad.jsonl",
             claude_tool_line("/w", "Bash", {{"command", "cat secret/answer.py"}}));
  auto bad =
      run_kdispatch({"audit", dir / "bad.jsonl", "--no-peek", "secret/**", "--worktree", "/w"});
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_NE(bad.out.find(
                "FINDING [VIOLATION] no_peek_read: read of no-peek path \"/w/secret/answer.py\""),
            std::string::npos)
      << bad.out;
  EXPECT_NE(bad.out.find(dir / "bad.jsonl:1"), std::string::npos);
}

TEST(AuditCli, JsonOutput) {
  TempDir dir;
  write_text(dir / "t.jsonl", claude_text_line("/w", "verdict: supported"));
  auto r = run_kdispatch({"audit", "--json", dir / "t.jsonl"});
  EXPECT_EQ(r.exit_code, 2);
  auto doc = nlohmann::json::parse(r.out);
  ASSERT_EQ(doc["findings"].size(), 1u);
  EXPECT_EQ(doc["findings"][0]["rule"], "verdict_language");
  EXPECT_EQ(doc["findings"][0]["severity"], "VIOLATION");
  EXPECT_EQ(doc["files"][0]["format"], "claude-code");
  EXPECT_EQ(doc["files"][0]["lines"], 1);
}

TEST(AuditCli, OwnRunDirectoryAuditsCleanAndTamperedFails) {
  TempDir dir;
  TranscriptBuilder t;
  t.header(dir / "wt");
  t.add("response",
        {{"turn", 1}, {"text", "Writing the kernel."}, {"tool_calls", nlohmann::json::array()}});
  t.tool_call("write_file", {{"path", "k.py"}, {"content", "x"}});
  t.end();
  std::string path = t.write(dir, "run/author/transcript.jsonl");
  auto ok = run_kdispatch({"audit", dir / "run"});
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  std::string text = t.text();
  text.replace(text.find("k.py"), 4, "../../etc/k.py");
  write_text(path, text);
  auto tampered = run_kdispatch({"audit", dir / "run"});
  EXPECT_EQ(tampered.exit_code, 2) << tampered.out;
  EXPECT_NE(tampered.out.find("FINDING [FABRICATION] chain_integrity"), std::string::npos)
      << tampered.out;
}

TEST(AuditCli, UsageErrors) {
  EXPECT_EQ(run_kdispatch({"audit"}).exit_code, 64);
  EXPECT_EQ(run_kdispatch({"audit", "x.jsonl", "--bogus"}).exit_code, 64);
  EXPECT_EQ(run_kdispatch({"audit", "x.jsonl", "--bar", "fast"}).exit_code, 64);
  EXPECT_EQ(run_kdispatch({"audit", "x.jsonl", "--stub-committed", "yesterday"}).exit_code, 64);
  auto missing = run_kdispatch({"audit", "/nonexistent/run"});
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.err.find("does not exist"), std::string::npos) << missing.err;
}

TEST(AuditCli, BadPolicyIsNamed) {
  TempDir dir;
  write_text(dir / "t.jsonl", claude_text_line("/w", "hi"));
  write_text(dir / "p.json", R"({"rules":{"made_up":{"enabled":true,"severity":"DRIFT"}}})");
  auto r = run_kdispatch({"audit", dir / "t.jsonl", "--policy", dir / "p.json"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("rules.made_up: unknown rule"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace kd::test

namespace kd::test {
namespace {

std::string fixture(const std::string& name) {
  return std::string(KD_SOURCE_DIR) + "/tests/audit/fixtures/" + name;
}

TEST(AuditCli, HandMadeSessions) {
  std::vector<std::string> ctx = {"--reference", "ref/naive.py", "--no-peek",
                                  "/home/kim/answers/**"};
  std::vector<std::string> clean_args = {"audit", fixture("claude_clean.jsonl"), "--json"};
  clean_args.insert(clean_args.end(), ctx.begin(), ctx.end());
  auto clean = run_kdispatch(clean_args);
  EXPECT_EQ(clean.exit_code, 0) << clean.out << clean.err;
  auto doc = nlohmann::json::parse(clean.out);
  EXPECT_EQ(doc["events"]["commit"], 1);
  EXPECT_EQ(doc["events"]["file_write"], 2);  // the Write and the bench redirection

  std::vector<std::string> bad_args = {"audit", fixture("claude_breaches.jsonl"), "--json"};
  bad_args.insert(bad_args.end(), ctx.begin(), ctx.end());
  auto bad = run_kdispatch(bad_args);
  EXPECT_EQ(bad.exit_code, 2) << bad.out << bad.err;
  std::map<std::string, int> rules;
  auto findings = nlohmann::json::parse(bad.out)["findings"];
  for (const auto& f : findings)
    ++rules[f["rule"].get<std::string>()];
  EXPECT_EQ(rules, (std::map<std::string, int>{{"commit_grammar", 1},
                                               {"no_peek_read", 1},
                                               {"numbers_without_receipt", 1},
                                               {"reference_write", 1},
                                               {"verdict_language", 1},
                                               {"write_outside_worktree", 1}}));
}

}  // namespace
}  // namespace kd::test
