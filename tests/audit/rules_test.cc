// One positive and one negative case per audit rule, on kdispatch transcripts sealed like the real
// writer seals them and on Claude Code / Codex lines.
#include <gtest/gtest.h>

#include <filesystem>

#include "audit/auditor.h"
#include "audit/context.h"
#include "audit/policy.h"
#include "audit/report.h"
#include "contract/run_record.h"
#include "tests/support/fixtures.h"

namespace kd::audit {
namespace {

using nlohmann::json;
using test::TempDir;

AuditPolicy policy() {
  return load_audit_policy(std::string(KD_SOURCE_DIR) + "/policies/audit.json");
}

AuditReport audit(const std::string& path, const AuditContext& ctx = {}) {
  return run_audit({path}, ctx, policy());
}

size_t count(const AuditReport& r, Rule rule) {
  size_t n = 0;
  for (const auto& f : r.findings)
    n += f.rule == rule;
  return n;
}

std::string dump(const AuditReport& r) {
  std::string s;
  for (const auto& f : r.findings)
    s += std::string(rule_id(f.rule)) + ": " + f.defect + " @ " + f.evidence + "\n";
  return s;
}

// run.json of a finished fam/v001 run in `run_dir` with these paths (contract::RunRecord).
void write_run_record(const std::filesystem::path& run_dir, const std::string& wiki,
                      const std::string& worktree, const std::string& gitdir,
                      const std::string& home) {
  contract::RunRecord r;
  r.wiki = wiki;
  r.family = "fam";
  r.experiment = "v001";
  r.branch = "kernel/fam-v001";
  r.worktree = worktree;
  r.gitdir = gitdir;
  r.home_repo = home;
  r.integration_branch = "integration";
  r.base_commit = std::string(40, 'a');
  r.author_chip = "0";
  r.brief_sha256 = std::string(64, 'b');
  r.author_transcript_head = std::string(64, 'c');
  r.end_reason = "finished";
  std::filesystem::create_directories(run_dir);
  r.save(run_dir);
}

// A clean author session in `wt`: reads, writes, runs, commits cand1 and finishes with a ledger
// whose row cites a valid receipt.
test::TranscriptBuilder clean_session(const TempDir& dir, const std::string& wt) {
  test::python_receipt(dir / "art/author/cand1.json", test::kPassVerifyReceipt);
  test::TranscriptBuilder t;
  t.header(wt, {"ref/naive.py"}, {"answers/**"}, dir / "art/author");
  t.add("request",
        {{"turn", 1}, {"attempt", 1}, {"provider", "fake"}, {"body_ref", std::string(64, 'b')}});
  t.add("response",
        {{"turn", 1}, {"text", "Reading the reference first."}, {"tool_calls", json::array()}});
  t.tool_call("read_file", {{"path", "ref/naive.py"}});
  t.tool_call("write_file", {{"path", "kernels/rms.py"}, {"content", "def rms(x): ...\n"}});
  t.tool_call("run_on_chip",
              {{"command", json::array({"python", "bench.py", "--out", "results.txt"})}});
  t.tool_call("commit", {{"message", "cand1(rms v001): fused single pass — p50 drop"}},
              "2026-03-02T11:00:00Z");
  std::string ledger = test::ledger_text(
      true, {{"cand1", "fused", "abc1234", "1e-3 / 2e-3", "2.0", "1.25x", "cand1.json", "kept"}});
  json finish = {{"ledger", ledger},
                 {"final_candidate", "kernels/rms.py"},
                 {"mechanism", "one pass over rows"}};
  t.tool_call("finish", finish);
  t.end(finish);
  return t;
}

TEST(AuditRules, OwnCleanTranscriptAuditsClean) {
  TempDir dir;
  std::string path = clean_session(dir, dir / "wt").write(dir, "run/author/transcript.jsonl");
  AuditContext ctx;
  ctx.plan = {"cand1"};
  ctx.stub_committed = "2026-03-02T09:00:00Z";
  AuditReport r = audit(dir / "run", ctx);
  EXPECT_TRUE(r.findings.empty()) << dump(r);
  EXPECT_EQ(audit_exit_status(r), 0);
  ASSERT_EQ(r.files.size(), 1u);
  ASSERT_TRUE(r.files[0].chain.has_value());
  EXPECT_TRUE(r.files[0].chain->ok);
  EXPECT_EQ(r.events["commit"], 1u);
  EXPECT_EQ(r.events["finish"], 2u);  // the finish call and the end record
  EXPECT_EQ(r.not_checked.count("plan_coverage"), 0u);
}

TEST(AuditRules, ChainIntegrity) {
  TempDir dir;
  std::string text = clean_session(dir, dir / "wt").text();
  size_t at = text.find("Reading the reference");
  text.replace(at, 7, "Writing");
  test::write_text(dir / "t.jsonl", text);
  AuditReport r = audit(dir / "t.jsonl");
  EXPECT_EQ(count(r, Rule::ChainIntegrity), 1u) << dump(r);
  EXPECT_EQ(audit_exit_status(r), 2);
}

TEST(AuditRules, TornLastLineIsReportedNotFatal) {
  TempDir dir;
  std::string good = test::claude_tool_line("/w", "Read", {{"file_path", "/w/a.py"}});
  test::write_text(dir / "ok.jsonl", good + good);
  EXPECT_EQ(count(audit(dir / "ok.jsonl"), Rule::TranscriptTorn), 0u);
  test::write_text(dir / "torn.jsonl", good + good.substr(0, 40));
  AuditReport r = audit(dir / "torn.jsonl");
  EXPECT_EQ(count(r, Rule::TranscriptTorn), 1u) << dump(r);
  EXPECT_EQ(r.files[0].lines, 2u);
  EXPECT_EQ(r.events["file_read"], 1u);
  EXPECT_EQ(audit_exit_status(r), 1);
}

TEST(AuditRules, WriteOutsideWorktree) {
  TempDir dir;
  std::string in =
      test::claude_tool_line("/w/kern", "Bash", {{"command", "cd src && echo x > out.txt"}}) +
      test::claude_tool_line("/w/kern", "Write",
                             {{"file_path", "/w/kern/k.py"}, {"content", "x"}}) +
      test::claude_tool_line("/w/kern", "Bash", {{"command", "echo x > /tmp/scratch"}});
  test::write_text(dir / "in.jsonl", in);
  EXPECT_EQ(count(audit(dir / "in.jsonl"), Rule::WriteOutsideWorktree), 0u);
  std::string out =
      in + test::claude_tool_line("/w/kern", "Bash", {{"command", "sed -i s/a/b/ ../other/x.py"}});
  test::write_text(dir / "out.jsonl", out);
  AuditReport r = audit(dir / "out.jsonl");
  ASSERT_EQ(count(r, Rule::WriteOutsideWorktree), 1u) << dump(r);
  EXPECT_NE(r.findings[0].defect.find("/w/other/x.py"), std::string::npos);
  EXPECT_EQ(r.findings[0].evidence, dir / "out.jsonl:4");
  EXPECT_EQ(audit_exit_status(r), 2);
}

TEST(AuditRules, AWikiUnderAScratchRootIsNotScratch) {
  TempDir dir;
  AuditContext ctx;
  ctx.worktree = "/tmp/lab/wiki/fam/pallas/.repo";
  ctx.wiki = "/tmp/lab/wiki";
  const std::string cwd = ctx.worktree;
  test::write_text(dir / "scratch.jsonl",
                   test::claude_tool_line(cwd, "Bash", {{"command", "echo x > /tmp/notes.txt"}}));
  EXPECT_EQ(count(audit(dir / "scratch.jsonl", ctx), Rule::WriteOutsideWorktree), 0u);
  test::write_text(dir / "page.jsonl",
                   test::claude_tool_line(cwd, "Bash", {{"command", "echo x >> ../page.md"}}));
  AuditReport r = audit(dir / "page.jsonl", ctx);
  ASSERT_EQ(count(r, Rule::WriteOutsideWorktree), 1u) << dump(r);
  EXPECT_NE(r.findings[0].defect.find("/tmp/lab/wiki/fam/pallas/page.md"), std::string::npos);
}

TEST(AuditRules, WriteOutsideFlagWorktreeOverridesRecordedCwd) {
  TempDir dir;
  test::write_text(dir / "a.jsonl",
                   test::claude_tool_line("/w/kern", "Edit", {{"file_path", "/w/kern/k.py"}}));
  AuditContext ctx;
  ctx.worktree = "/w/other";
  EXPECT_EQ(count(audit(dir / "a.jsonl", ctx), Rule::WriteOutsideWorktree), 1u);
}

TEST(AuditRules, ReferenceWrite) {
  TempDir dir;
  test::TranscriptBuilder ok;
  ok.header(dir / "wt", {"ref/naive.py"});
  ok.tool_call("edit_file", {{"path", "kernels/rms.py"}, {"old", "a"}, {"new", "b"}});
  ok.end();
  EXPECT_EQ(count(audit(ok.write(dir, "ok.jsonl")), Rule::ReferenceWrite), 0u);
  test::TranscriptBuilder bad;
  bad.header(dir / "wt", {"ref/naive.py"});
  bad.tool_call("edit_file", {{"path", "ref/naive.py"}, {"old", "a"}, {"new", "b"}});
  bad.end();
  AuditReport r = audit(bad.write(dir, "bad.jsonl"));
  EXPECT_EQ(count(r, Rule::ReferenceWrite), 1u) << dump(r);
  EXPECT_EQ(audit_exit_status(r), 2);
}

TEST(AuditRules, NoPeekRead) {
  TempDir dir;
  AuditContext ctx;
  ctx.no_peek = {"answers/**", "/srv/solutions/*.py"};
  test::write_text(
      dir / "ok.jsonl",
      test::claude_tool_line("/w", "Read", {{"file_path", "/w/src/k.py"}}) +
          test::claude_tool_line("/w", "Bash", {{"command", "cat notes/answers.txt"}}));
  EXPECT_EQ(count(audit(dir / "ok.jsonl", ctx), Rule::NoPeekRead), 0u);
  test::write_text(
      dir / "bad.jsonl",
      test::claude_tool_line("/w", "Bash", {{"command", "head -n 20 answers/v001/best.py"}}) +
          test::claude_tool_line("/w", "Read", {{"file_path", "/srv/solutions/k.py"}}) +
          test::claude_tool_line("/w", "Grep", {{"pattern", "def"}, {"path", "answers"}}));
  AuditReport r = audit(dir / "bad.jsonl", ctx);
  EXPECT_EQ(count(r, Rule::NoPeekRead), 3u) << dump(r);
}

TEST(AuditRules, NoPeekFromKdispatchHeader) {
  TempDir dir;
  test::TranscriptBuilder t;
  t.header(dir / "wt", {}, {"answers/**"});
  t.tool_call("read_file", {{"path", "answers/cand.py"}});
  t.end();
  EXPECT_EQ(count(audit(t.write(dir, "t.jsonl")), Rule::NoPeekRead), 1u);
}

TEST(AuditRules, VerdictLanguage) {
  TempDir dir;
  test::write_text(
      dir / "ok.jsonl",
      test::claude_text_line(
          "/w", "Parity passed; this tile shape is not supported by Mosaic, trying 256."));
  EXPECT_EQ(count(audit(dir / "ok.jsonl"), Rule::VerdictLanguage), 0u);
  test::write_text(dir / "bad.jsonl",
                   test::claude_text_line("/w", "Done. The hypothesis is SUPPORTED by cand2.") +
                       test::claude_text_line("/w", "Verdict: refuted"));
  AuditReport r = audit(dir / "bad.jsonl");
  EXPECT_EQ(count(r, Rule::VerdictLanguage), 2u) << dump(r);
}

TEST(AuditRules, VerdictLanguageIgnoresTheVerifier) {
  TempDir dir;
  test::TranscriptBuilder t("verifier");
  t.header(dir / "wt");
  t.add("response", {{"turn", 1}, {"text", "verdict: PASS"}, {"tool_calls", json::array()}});
  t.end();
  EXPECT_EQ(count(audit(t.write(dir, "v.jsonl")), Rule::VerdictLanguage), 0u);
}

TEST(AuditRules, NumbersWithoutReceipt) {
  TempDir dir;
  test::write_text(
      dir / "ok.jsonl",
      test::claude_text_line("/w", "cand1 runs 1.3x faster, receipt raw/profiles/t/receipt.json") +
          test::claude_text_line("/w", "Tried 3 tile sizes on the x axis."));
  EXPECT_EQ(count(audit(dir / "ok.jsonl"), Rule::NumbersWithoutReceipt), 0u);
  test::write_text(dir / "bad.jsonl",
                   test::claude_text_line("/w", "cand1 gives a 1.3x speedup over naive.") +
                       test::claude_text_line("/w", "Speedup: 2.10 on the op point."));
  EXPECT_EQ(count(audit(dir / "bad.jsonl"), Rule::NumbersWithoutReceipt), 2u);
}

TEST(AuditRules, LedgerRowNumbersWithoutReceipt) {
  TempDir dir;
  test::TranscriptBuilder t;
  t.header(dir / "wt");
  t.tool_call("commit", {{"message", "cand1(rms v001): a — b"}});
  t.end({{"ledger",
          test::ledger_text(true, {{"cand1", "x", "abc", "ok", "0.41", "1.3x", "—", "kept"}})}});
  AuditReport r = audit(t.write(dir, "t.jsonl"));
  EXPECT_EQ(count(r, Rule::NumbersWithoutReceipt), 1u) << dump(r);
}

TEST(AuditRules, CommitGrammar) {
  TempDir dir;
  std::string ok =
      test::claude_tool_line(
          "/w", "Bash", {{"command", "git commit -am 'cand2(rms v001): tile 256 — p50 down'"}}) +
      test::claude_tool_line("/w", "Bash", {{"command", "git commit -m 'K3(rms v001): stub'"}});
  test::write_text(dir / "ok.jsonl", ok);
  AuditReport clean = audit(dir / "ok.jsonl");
  EXPECT_EQ(count(clean, Rule::CommitGrammar), 0u) << dump(clean);
  EXPECT_EQ(clean.events["commit"], 2u);
  test::write_text(dir / "bad.jsonl",
                   test::claude_tool_line(
                       "/w", "Bash", {{"command", "git add -A && git commit -m \"wip: faster\""}}));
  AuditReport r = audit(dir / "bad.jsonl");
  EXPECT_EQ(count(r, Rule::CommitGrammar), 1u) << dump(r);
  EXPECT_EQ(audit_exit_status(r), 1);
}

TEST(AuditRules, LoadedLine) {
  TempDir dir;
  for (bool loaded : {true, false}) {
    test::TranscriptBuilder t;
    t.header(dir / "wt");
    t.end({{"ledger", test::ledger_text(
                          loaded, {{"cand1", "x", "-", "-", "-", "-", "-", "abandoned: OOM"}})}});
    AuditReport r = audit(t.write(dir, loaded ? "a.jsonl" : "b.jsonl"));
    EXPECT_EQ(count(r, Rule::LoadedLine), loaded ? 0u : 1u) << dump(r);
  }
}

TEST(AuditRules, LedgerVsCommitsFromTheTranscript) {
  TempDir dir;
  test::TranscriptBuilder ok;
  ok.header(dir / "wt");
  ok.tool_call("commit", {{"message", "cand1(rms v001): a — b"}});
  ok.end({{"ledger",
           test::ledger_text(true, {{"cand1", "x", "abc1234", "-", "-", "-", "-", "kept"}})}});
  EXPECT_EQ(count(audit(ok.write(dir, "ok.jsonl")), Rule::LedgerVsCommits), 0u);
  test::TranscriptBuilder bad;
  bad.header(dir / "wt");
  bad.tool_call("commit", {{"message", "cand1(rms v001): a — b"}});
  bad.tool_call("commit", {{"message", "cand3(rms v001): c — d"}});
  bad.end({{"ledger",
            test::ledger_text(true, {{"cand1", "x", "abc1234", "-", "-", "-", "-", "kept"},
                                     {"cand2", "x", "def5678", "-", "-", "-", "-", "kept"}})}});
  AuditReport r = audit(bad.write(dir, "bad.jsonl"));
  EXPECT_EQ(count(r, Rule::LedgerVsCommits), 2u)
      << dump(r);  // cand2 row without commit, cand3 commit without row
}

TEST(AuditRules, LedgerVsCommitsThroughLibgit2) {
  TempDir dir;
  std::string repo = dir / "repo";
  auto git = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"git", "-C", repo, "-c", "user.name=t", "-c", "user.email=t@e"});
    auto r = test::run_process(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  };
  std::filesystem::create_directories(repo);
  git({"init", "-q", "-b", "kernel/rms-v001"});
  test::write_text(repo + "/k.py", "x\n");
  git({"add", "k.py"});
  git({"commit", "-q", "-m", "cand1(rms v001): a — b"});
  std::string sha = git({"rev-parse", "HEAD"}).substr(0, 40);
  AuditContext ctx;
  ctx.repository = repo;
  ctx.branch = "kernel/rms-v001";
  for (const std::string& cited :
       {sha.substr(0, 12), std::string("0123456789abcdef0123456789abcdef01234567")}) {
    test::TranscriptBuilder t;
    t.header(repo);
    t.end(
        {{"ledger", test::ledger_text(true, {{"cand1", "x", cited, "-", "-", "-", "-", "kept"}})}});
    AuditReport r = audit(t.write(dir, "t" + cited.substr(0, 4) + ".jsonl"), ctx);
    EXPECT_EQ(count(r, Rule::LedgerVsCommits), cited == sha.substr(0, 12) ? 0u : 1u) << dump(r);
  }
}

TEST(AuditRules, PlanCoverage) {
  TempDir dir;
  AuditContext ctx;
  ctx.plan = {"cand1", "cand2"};
  std::string ledger =
      test::ledger_text(true, {{"cand1", "x", "-", "-", "-", "-", "-", "rejected"}});
  test::TranscriptBuilder bad;
  bad.header(dir / "wt");
  bad.end({{"ledger", ledger}});
  AuditReport r = audit(bad.write(dir, "bad.jsonl"), ctx);
  ASSERT_EQ(count(r, Rule::PlanCoverage), 1u) << dump(r);
  EXPECT_NE(r.findings[0].defect.find("cand2"), std::string::npos);
  test::TranscriptBuilder ok;
  ok.header(dir / "wt");
  ok.end({{"ledger", ledger},
          {"abandoned", {{{"item", "cand2"}, {"reason", "needs a VMEM budget the chip lacks"}}}}});
  EXPECT_EQ(count(audit(ok.write(dir, "ok.jsonl"), ctx), Rule::PlanCoverage), 0u);
}

TEST(AuditRules, StubOrder) {
  TempDir dir;
  test::TranscriptBuilder t;
  t.header(dir / "wt");
  t.tool_call("commit", {{"message", "cand1(rms v001): a — b"}}, "2026-03-02T10:00:00Z");
  t.end();
  std::string path = t.write(dir, "t.jsonl");
  AuditContext before, after;
  before.stub_committed = "2026-03-02T09:59:59Z";
  after.stub_committed = "2026-03-02T11:30:00+01:00";  // 10:30 UTC, after the commit
  EXPECT_EQ(count(audit(path, before), Rule::StubOrder), 0u);
  EXPECT_EQ(count(audit(path, after), Rule::StubOrder), 1u);
  EXPECT_EQ(audit(path).not_checked.count("stub_order"), 1u);
}

// A commit whose time cannot be read may have been the first: the order is reported unchecked,
// never passed; a readable commit before the stub is still a violation.
TEST(AuditRules, StubOrderWithAnUnreadableCommitTimeIsNotPassed) {
  TempDir dir;
  AuditContext ctx;
  ctx.stub_committed = "2026-03-02T09:00:00Z";
  test::TranscriptBuilder untimed;
  untimed.header(dir / "wt");
  untimed.tool_call("commit", {{"message", "cand1(rms v001): a — b"}}, "2026-03-02T10:00:00Z");
  untimed.tool_call("commit", {{"message", "cand2(rms v001): c — d"}}, "2026-02-30T08:00:00Z");
  untimed.end();
  AuditReport r = audit(untimed.write(dir, "untimed.jsonl"), ctx);
  EXPECT_EQ(count(r, Rule::StubOrder), 0u) << dump(r);
  ASSERT_EQ(r.not_checked.count("stub_order"), 1u);
  EXPECT_NE(r.not_checked.at("stub_order").find("no RFC 3339 time"), std::string::npos);

  test::TranscriptBuilder early;
  early.header(dir / "wt");
  early.tool_call("commit", {{"message", "cand1(rms v001): a — b"}}, "2026-03-02T08:00:00Z");
  early.tool_call("commit", {{"message", "cand2(rms v001): c — d"}}, "yesterday");
  early.end();
  const std::string early_path = early.write(dir, "early.jsonl");
  EXPECT_EQ(count(audit(early_path, ctx), Rule::StubOrder), 1u);

  AuditContext bad_stub;
  bad_stub.stub_committed = "2026-03-02 9:00";
  AuditReport b = audit(early_path, bad_stub);
  EXPECT_EQ(count(b, Rule::StubOrder), 0u);
  EXPECT_EQ(b.not_checked.count("stub_order"), 1u);
}

TEST(AuditRules, ReceiptInvalid) {
  TempDir dir;
  test::python_receipt(dir / "r/good.json", test::kPassVerifyReceipt);
  test::python_receipt(dir / "r/edited.json", test::kPassVerifyReceipt, "obj['speedup']=3.0");
  AuditContext ctx;
  ctx.receipt_dirs = {dir / "r"};
  auto run = [&](const std::string& receipt, const std::string& name) {
    test::TranscriptBuilder t;
    t.header(dir / "wt");
    t.end({{"ledger",
            test::ledger_text(true, {{"cand1", "x", "-", "-", "2.0", "1.25x", receipt, "kept"}})}});
    return audit(t.write(dir, name), ctx);
  };
  EXPECT_EQ(count(run("good.json", "a.jsonl"), Rule::ReceiptInvalid), 0u);
  AuditReport missing = run("raw/profiles/none.json", "b.jsonl");
  EXPECT_EQ(count(missing, Rule::ReceiptInvalid), 1u) << dump(missing);
  EXPECT_EQ(audit_exit_status(missing), 2);
  AuditReport edited = run("edited.json", "c.jsonl");
  ASSERT_EQ(count(edited, Rule::ReceiptInvalid), 1u);
  EXPECT_NE(edited.findings[0].defect.find("does not match"), std::string::npos) << dump(edited);
}

std::string page(const std::string& receipt, const std::string& bar) {
  return "---\nstatus: filed\nverdict: supported\nbar: " + bar + "\nverified_by: " + receipt +
         "\n---\n# rms v001\n";
}

TEST(AuditRules, SupportedWithoutPass) {
  TempDir dir;
  test::python_receipt(dir / "w/pass.json", test::kPassVerifyReceipt);
  std::string fail_receipt = test::kPassVerifyReceipt;
  fail_receipt.replace(fail_receipt.find("'PASS'"), 6, "'FAIL'");
  test::python_receipt(dir / "w/fail.json", fail_receipt);
  auto run = [&](const std::string& content, const std::string& name) {
    test::write_text(dir / name, test::claude_tool_line(
                                     dir / "w", "Write",
                                     {{"file_path", dir / "w/page.md"}, {"content", content}}));
    return audit(dir / name);
  };
  EXPECT_EQ(count(run(page("pass.json", "1.2"), "a.jsonl"), Rule::SupportedWithoutPass), 0u);
  EXPECT_EQ(count(run(page("pass.json", "1.3"), "b.jsonl"), Rule::SupportedWithoutPass),
            1u);  // below the bar
  AuditReport fail = run(page("fail.json", "1.1"), "c.jsonl");
  EXPECT_EQ(count(fail, Rule::SupportedWithoutPass), 1u) << dump(fail);
  EXPECT_EQ(count(run(page("", "1.1"), "d.jsonl"), Rule::SupportedWithoutPass), 1u);
}

TEST(AuditRules, SupportedOutcomeOfARunDirectory) {
  TempDir dir;
  clean_session(dir, dir / "wt").write(dir, "run/author/transcript.jsonl");
  test::python_receipt(dir / "run/verifier/receipt.json", test::kPassVerifyReceipt);
  test::write_text(dir / "run/outcome.json", R"({"verdict":"supported","bar":1.2,"receipt":")" +
                                                 (dir / "run/verifier/receipt.json") + "\"}");
  EXPECT_EQ(count(audit(dir / "run"), Rule::SupportedWithoutPass), 0u);
  test::write_text(dir / "run/outcome.json", R"({"verdict":"supported","bar":1.5,"receipt":")" +
                                                 (dir / "run/verifier/receipt.json") + "\"}");
  EXPECT_EQ(count(audit(dir / "run"), Rule::SupportedWithoutPass), 1u);
}

// A denial the box recorded is an attempt, whatever it was kept from; a limit is not.
TEST(AuditRules, SandboxViolationRecordsAreFindings) {
  TempDir dir;
  test::TranscriptBuilder t;
  t.header(dir / "wt");
  t.tool_call("run", {{"command", json::array({"python3", "-c", "..."})}});
  t.add("violation",
        {{"layer", "landlock"}, {"op", "write"}, {"path", "/etc/hosts"}, {"errno", "EACCES"}});
  t.add("violation", {{"layer", "timeout"}, {"op", "run"}, {"path", ""}, {"errno", "0"}});
  t.end();
  AuditReport r = audit(t.write(dir, "t.jsonl"));
  ASSERT_EQ(count(r, Rule::SandboxViolation), 1u) << dump(r);
  EXPECT_NE(dump(r).find("the sandbox refused: landlock denied write /etc/hosts"),
            std::string::npos)
      << dump(r);
  EXPECT_EQ(audit_exit_status(r), 2);
}

// A command the supervising person denied is their decision, not a refusal of the sandbox: it is
// listed apart from the findings, and the exit status does not count it.
TEST(AuditRules, SupervisorDecisionsAreListedApartFromFindings) {
  TempDir dir;
  test::TranscriptBuilder t;
  t.header(dir / "wt");
  t.tool_call("run", {{"command", json::array({"make", "bench"})}});
  t.add("decision", {{"decision", "note"},
                     {"tool", "run"},
                     {"by", "terminal"},
                     {"command", json::array({"make", "bench"})},
                     {"text", "keep it short"},
                     {"tool_call_id", "c1"}});
  t.add("decision", {{"decision", "denied"},
                     {"tool", "run"},
                     {"by", "terminal"},
                     {"command", json::array({"make", "bench"})},
                     {"reason", "not before the screen run"},
                     {"tool_call_id", "c1"}});
  t.add("tool_result", {{"id", "c1"}, {"name", "run"}, {"is_error", true}, {"content", "denied"}});
  t.add("decision", {{"decision", "approved"},
                     {"tool", "commit"},
                     {"by", "terminal"},
                     {"message", "cand1(x v001): a — b"},
                     {"tool_call_id", "c2"}});
  t.end();
  AuditReport r = audit(t.write(dir, "t.jsonl"));
  EXPECT_TRUE(r.findings.empty()) << dump(r);
  EXPECT_EQ(audit_exit_status(r), 0);
  EXPECT_EQ(r.events["supervision"], 3u);
  ASSERT_EQ(r.supervision.size(), 2u);  // a plain approval is only counted
  EXPECT_EQ(r.supervision[0].decision, "note");
  EXPECT_EQ(r.supervision[1].decision, "denied");
  EXPECT_EQ(r.supervision[1].text,
            "denied run `'make' 'bench'` (call c1): not before the screen run");
  EXPECT_NE(render_text(r).find("SUPERVISOR denied run `'make' 'bench'` (call c1): not before the "
                                "screen run"),
            std::string::npos)
      << render_text(r);
  EXPECT_EQ(r.files[0].unknown.size(), 0u);
}

// A run directory's record names the wiki, the runs' root and the home repository: a write
// there is never scratch, even under an allowed root such as /tmp, and a relative path with ..
// is judged where it lands.
TEST(AuditRules, WritesIntoTheRunsOrTheHomeRepositoryAreNeverScratch) {
  TempDir dir;  // under /tmp here, an allowed root
  const std::string runs = dir / "runs", wiki = dir / "wiki", wt = dir / "wiki/fam/.repo";
  test::TranscriptBuilder t;
  t.header(wt, {}, {}, dir / "wiki/raw/profiles/p/fam-v001/author");
  t.tool_call("write_file", {{"path", "../../../runs/p/fam-v001/outcome.json"}, {"content", "x"}});
  t.tool_call("write_file", {{"path", wiki + "/raw/code/home/lib.py"}, {"content", "x"}});
  t.tool_call("write_file",
              {{"path", wiki + "/raw/profiles/p/fam-v001/author/notes.json"}, {"content", "x"}});
  t.tool_call("write_file", {{"path", dir / "scratch.txt"}, {"content", "x"}});
  t.end();
  t.write(dir, "runs/p/fam-v001/author/transcript.jsonl");
  write_run_record(dir / "runs/p/fam-v001", wiki, wt, wiki + "/raw/code/home/.git/worktrees/fam",
                   wiki + "/raw/code/home");
  AuditReport r = audit(runs + "/p/fam-v001");
  ASSERT_EQ(count(r, Rule::WriteOutsideWorktree), 2u) << dump(r);
  EXPECT_NE(dump(r).find(runs + "/p/fam-v001/outcome.json"), std::string::npos) << dump(r);
  EXPECT_NE(dump(r).find(wiki + "/raw/code/home/lib.py"), std::string::npos) << dump(r);
}

// A run's outcome names its receipt relative to the wiki: the audit reads it there, not a file of
// the same relative name planted in the author's artifact dir (searched first for ledger rows).
TEST(AuditRules, AForgedReceiptInTheArtifactDirDoesNotShadowTheRunsReceipt) {
  TempDir dir;
  const std::string wiki = dir / "wiki", rel = "raw/profiles/p/fam-v001/verifier/receipt.json";
  const std::string art = dir / "wiki/raw/profiles/p/fam-v001/author";
  clean_session(dir, dir / "wt").write(dir, "run/author/transcript.jsonl");
  // The real receipt was edited after it was sealed; an intact PASS sits where the artifact dir
  // would be searched for the same relative path.
  test::python_receipt(wiki + "/" + rel, test::kPassVerifyReceipt, "obj['speedup'] = 9.0");
  test::python_receipt(art + "/" + rel, test::kPassVerifyReceipt);
  test::TranscriptBuilder t;
  t.header(dir / "wt", {}, {}, art);
  t.end();
  t.write(dir, "run/author/transcript.jsonl");
  write_run_record(dir / "run", wiki, dir / "wt", dir / "g", dir / "home");
  test::write_text(dir / "run/outcome.json",
                   R"({"verdict":"supported","bar":1.2,"receipt":{"path":")" + rel + "\"}}");
  AuditReport r = audit(dir / "run");
  ASSERT_EQ(count(r, Rule::SupportedWithoutPass), 1u) << dump(r);
  EXPECT_NE(dump(r).find("does not validate"), std::string::npos) << dump(r);
}

TEST(AuditRules, DisabledRuleIsSilent) {
  TempDir dir;
  test::write_text(dir / "bad.jsonl", test::claude_text_line("/w", "verdict: supported"));
  AuditPolicy p = policy();
  p.rule(Rule::VerdictLanguage).enabled = false;
  EXPECT_EQ(count(run_audit({dir / "bad.jsonl"}, {}, p), Rule::VerdictLanguage), 0u);
}

TEST(AuditRules, FindingsPerRuleAreCapped) {
  TempDir dir;
  std::string text;
  for (int i = 0; i < 80; ++i)
    text += test::claude_text_line("/w", "verdict: supported");
  test::write_text(dir / "many.jsonl", text);
  AuditReport r = audit(dir / "many.jsonl");
  EXPECT_EQ(count(r, Rule::VerdictLanguage), 50u);
  EXPECT_EQ(r.suppressed["verdict_language"], 30u);
}

}  // namespace
}  // namespace kd::audit

namespace kd::audit {
namespace {

TEST(AuditRules, CodexPatchesResolveAgainstTheRecordedCwd) {
  TempDir dir;
  auto line = [](const json& j) { return j.dump() + "\n"; };
  std::string meta =
      line({{"timestamp", "2026-03-02T10:00:00Z"},
            {"type", "session_meta"},
            {"payload", {{"id", "x"}, {"cwd", "/w/kern"}, {"cli_version", "0.98.0"}}}});
  std::string inside =
      line({{"timestamp", "2026-03-02T10:00:01Z"},
            {"type", "response_item"},
            {"payload",
             {{"type", "custom_tool_call"},
              {"name", "apply_patch"},
              {"call_id", "c1"},
              {"input", "*** Begin Patch\n*** Add File: k.py\n+x\n*** End Patch\n"}}}});
  json shell_args = {{"command", {"bash", "-lc", "cp k.py ../ref/naive.py"}},
                     {"workdir", "/w/kern"}};
  json call = {{"type", "function_call"},
               {"name", "shell"},
               {"call_id", "c2"},
               {"arguments", shell_args.dump()}};
  std::string outside =
      line({{"timestamp", "2026-03-02T10:00:02Z"}, {"type", "response_item"}, {"payload", call}});
  test::write_text(dir / "ok.jsonl", meta + inside);
  AuditReport ok = audit(dir / "ok.jsonl");
  EXPECT_TRUE(ok.findings.empty()) << dump(ok);
  test::write_text(dir / "bad.jsonl", meta + inside + outside);
  AuditContext ctx;
  ctx.references = {"/w/ref/naive.py"};
  AuditReport bad = audit(dir / "bad.jsonl", ctx);
  EXPECT_EQ(count(bad, Rule::WriteOutsideWorktree), 1u) << dump(bad);
  EXPECT_EQ(count(bad, Rule::ReferenceWrite), 1u) << dump(bad);
}

TEST(AuditRules, ClaudeSubagentFilesAreAuditedWithTheSession) {
  TempDir dir;
  test::write_text(dir / "s1.jsonl", test::claude_text_line("/w", "Dispatching a reviewer."));
  test::write_text(dir / "s1/subagents/agent-a1.jsonl",
                   test::claude_text_line("/w", "Verdict: supported"));
  AuditReport r = audit(dir / "s1.jsonl");
  EXPECT_EQ(r.files.size(), 2u);
  ASSERT_EQ(count(r, Rule::VerdictLanguage), 1u);
  EXPECT_NE(r.findings[0].evidence.find("agent-a1.jsonl:1"), std::string::npos);
}

TEST(AuditRules, FinishRepeatedByTheEndRecordIsCheckedOnce) {
  TempDir dir;
  test::TranscriptBuilder t;
  t.header(dir / "wt");
  json finish = {{"ledger", test::ledger_text(true, {})}, {"mechanism", "verdict: supported"}};
  t.tool_call("finish", finish);
  t.end(finish);
  EXPECT_EQ(count(audit(t.write(dir, "t.jsonl")), Rule::VerdictLanguage), 1u);
}

}  // namespace
}  // namespace kd::audit
