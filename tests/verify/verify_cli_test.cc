// `kdispatch verify` end to end: the honest author's run, then the verifier in its own box on the
// other CPU chip, with our numpy verify tool writing kgate-format receipts; and each way a
// verification can go wrong, each ending in the verdict the fixed rules give.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/files.h"
#include "common/sha256.h"
#include "contract/receipt_json.h"
#include "contract/transcript_chain.h"
#include "examples/example_wiki.h"
#include "git/repo.h"
#include "tests/support/example_env.h"

namespace kd {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// The verdict the rules (docs/dispatcher.md) give a valid verify receipt of the example (bar 1.02,
// kernel-authored).
std::string expected_verdict(const json& r) {
  if (r["parity_verdict"] != "PASS") return "invalid";
  if (!r["gates"]["firing"].get<bool>() || r["hlo_audit"]["custom_call_count"] == 0)
    return "inconclusive";
  if (!r["gates"]["measure"].get<bool>()) return "inconclusive";
  if (r["verdict"] == "PASS" && r["speedup"].get<double>() >= 1.02) {
    // The measuring parent's spread: supported needs its low end at the bar too.
    if (r.contains("speedup_spread") && r["speedup_spread"]["low"].get<double>() < 1.02)
      return "inconclusive";
    return r["mode"] == "full" ? "supported" : "inconclusive";
  }
  return "refuted";
}

struct Authored : test::ExampleEnv {
  Authored() {
    auto a = author(script("honest-author.json"));
    EXPECT_EQ(a.exit_code, 0) << a.out << a.err;
  }
  json finish() const { return json::parse(read_file(run_dir() / "author/finish.json")); }
  std::string gitdir() const {
    return json::parse(read_file(run_dir() / "run.json"))["gitdir"].get<std::string>();
  }
  // A further commit on the experiment branch made on the host, named as the final candidate.
  std::string replace_final(const std::string& rel, const std::string& content) {
    write_file_atomic(worktree() / rel, content);
    auto c = git::commit_all(worktree(), gitdir(), "kernel/rms-norm-v002",
                             "cand9(rms-norm v002): test — made by the test", {rel});
    json f = finish();
    f["final_candidate"]["sha"] = c.sha;
    write_file_atomic(run_dir() / "author/finish.json", f.dump(2));
    return c.sha;
  }
};

TEST(VerifyCli, HonestRunGetsTheVerdictItsReceiptGives) {
  Authored env;
  auto v = env.verify();
  json out = env.outcome();
  ASSERT_TRUE(out["receipt"]["ok"].get<bool>()) << out.dump(2) << v.err;
  fs::path receipt = env.wiki / out["receipt"]["path"].get<std::string>();
  EXPECT_EQ(receipt, env.wiki / "raw/profiles/example/rms-norm-v002/verifier/receipt.json");
  json r = json::parse(read_file(receipt));
  EXPECT_EQ(out["verdict"], expected_verdict(r)) << out.dump(2);
  EXPECT_EQ(v.exit_code, out["verdict"] == "supported" || out["verdict"] == "refuted" ? 0 : 2);
  // The receipt is intact for our own validator, and measured the final candidate's snapshot.
  EXPECT_EQ(test::run_kdispatch({"receipt", "verify", receipt.string()}).exit_code, 0);
  EXPECT_EQ(out["final_candidate"]["sha"], env.finish()["final_candidate"]["sha"]);
  EXPECT_NE(r["candidate"]["path"].get<std::string>().find("/verifier/candidate-tree/"),
            std::string::npos);
  // Measured by kdispatch's parent and signed with the run root's key; `receipt verify` checks
  // the signature when given the key.
  EXPECT_EQ(out["measurement"]["path"], "kdispatch's own measurement");
  EXPECT_EQ(out["measurement"]["signature"], "valid");
  auto signed_ok =
      test::run_kdispatch({"receipt", "verify", receipt.string(), "--run-root", env.runs.string()});
  EXPECT_EQ(signed_ok.exit_code, 0) << signed_ok.out;
  EXPECT_NE(signed_ok.out.find("signature=valid"), std::string::npos) << signed_ok.out;
  // On the other chip, never the author's.
  EXPECT_EQ(out["verifier"]["chip"], "1");
  EXPECT_EQ(out["transcript_heads"]["author"],
            json::parse(read_file(env.run_dir() / "run.json"))["author_transcript_head"]);
  std::string filing = read_file(env.run_dir() / "filing.md");
  EXPECT_NE(filing.find("## Independent measurements"), std::string::npos);
  EXPECT_NE(filing.find("Hypothesis-firing audit: HYPOTHESIS FIRING CONFIRMED"), std::string::npos);
  EXPECT_NE(filing.find("v002\t"), std::string::npos) << filing;
  ASSERT_EQ(env.records("verify_started").size(), 1u);

  // Asked again: the journal's verdict stands and nothing is measured a second time.
  auto again = env.verify();
  EXPECT_NE(again.out.find("recorded earlier"), std::string::npos) << again.out;
  EXPECT_EQ(env.records("verify_started").size(), 1u);

  // --file: the page is flipped and stamped, the pre-registered text kept, RESULTS.tsv gets a row,
  // and both are committed.
  fs::path page = env.wiki / "wiki/kernel_experiments/rms-norm/pallas/2026-11-30-v002-rms-norm.md";
  std::string before = read_file(page);
  auto filed = env.verify({"--file"});
  EXPECT_NE(filed.out.find("filed into the wiki"), std::string::npos) << filed.out << filed.err;
  std::string after = read_file(page);
  EXPECT_NE(after.find("status: filed"), std::string::npos);
  EXPECT_NE(after.find("verdict: " + out["verdict"].get<std::string>()), std::string::npos);
  std::string body = before.substr(before.find("\n---", 3));
  EXPECT_NE(after.find(body), std::string::npos) << "pre-registered text changed";
  std::string tsv = read_file(page.parent_path() / "RESULTS.tsv");
  EXPECT_EQ(tsv.rfind("exp_id\tdate\t", 0), 0u);
  EXPECT_NE(tsv.find("\nv002\t"), std::string::npos);
  auto [head, branch] = git::head_of(env.wiki);
  EXPECT_EQ(git::file_at(env.wiki, head,
                         "wiki/kernel_experiments/rms-norm/pallas/"
                         "2026-11-30-v002-rms-norm.md"),
            after);
}

TEST(VerifyCli, AuthorThatNeverFinishesIsInconclusive) {
  test::ExampleEnv env;
  fs::path script = env.root / "silent.json";
  // Three turns without a tool call: the session nudges twice, then ends without a finish (a
  // script that ran out would be the provider failing, an error and no verdict).
  write_file_atomic(script, R"({"turns": [{"text": "Let me think about this for a while."},
                                          {"text": "Still thinking."}, {"text": "Thinking."}]})");
  auto a = env.author(script.string());
  EXPECT_EQ(a.exit_code, 2) << a.out << a.err;
  auto v = env.verify();
  EXPECT_EQ(v.exit_code, 2);
  json out = env.outcome();
  EXPECT_EQ(out["verdict"], "inconclusive");
  EXPECT_NE(out["reasons"][0].get<std::string>().find("without a valid finish"), std::string::npos);
  EXPECT_TRUE(env.records("verify_started").empty());
}

TEST(VerifyCli, WrongKernelIsInvalid) {
  Authored env;
  env.replace_final("normkit/rms_norm.py",
                    "from normkit.reference import CONFIG\n\n\ndef workload(x, scale):\n"
                    "    return x * scale * 2.0\n");
  env.verify();
  json out = env.outcome();
  EXPECT_EQ(out["verdict"], "invalid") << out.dump(2);
  EXPECT_EQ(out["receipt"]["verdict"], "FAIL");
}

TEST(VerifyCli, RelabelledBaselineCannotReachTheReference) {
  Authored env;
  env.replace_final("normkit/rms_norm.py",
                    "from normkit.reference import workload as _w\n\n\ndef workload(x, scale):\n"
                    "    return _w(x, scale)\n");
  env.verify();
  json out = env.outcome();
  // The candidate's box holds nothing of the reference: the import fails and so does parity.
  EXPECT_EQ(out["verdict"], "invalid") << out.dump(2);
  EXPECT_NE(out["reasons"][0].get<std::string>().find("parity FAIL"), std::string::npos);
  json r = json::parse(read_file(env.wiki / out["receipt"]["path"].get<std::string>()));
  EXPECT_NE(r["parity"]["error"].get<std::string>().find("normkit.reference"), std::string::npos)
      << r.dump(2);
}

// A receipt edited after the parent signed it, with its self-hash recomputed, is not the
// parent's: `receipt verify` with the key refuses it.
TEST(VerifyCli, ResealedReceiptFailsItsSignature) {
  Authored env;
  env.verify();
  json out = env.outcome();
  fs::path receipt = env.wiki / out["receipt"]["path"].get<std::string>();
  auto resealed = test::run_kdispatch({"receipt", "verify", receipt.string()});
  ASSERT_EQ(resealed.exit_code, 0) << resealed.out;
  std::string text = read_file(receipt);
  json r = json::parse(text);
  r["speedup_spread"]["low"] = 99.0;
  r.erase("self_sha256");
  const std::string body = r.dump();
  r["self_sha256"] = sha256_hex(contract::canonical_json(contract::parse_receipt_json(body)));
  write_file_atomic(receipt, r.dump());
  EXPECT_EQ(test::run_kdispatch({"receipt", "verify", receipt.string()}).exit_code, 0)
      << "the self-hash alone cannot tell";
  auto keyed =
      test::run_kdispatch({"receipt", "verify", receipt.string(), "--run-root", env.runs.string()});
  EXPECT_EQ(keyed.exit_code, 2) << keyed.out;
  EXPECT_NE(keyed.out.find("signature does not match"), std::string::npos) << keyed.out;
}

TEST(VerifyCli, CandidateThatChangesTheReferenceIsInvalid) {
  Authored env;
  std::string ref = read_file(env.worktree() / "normkit/reference.py");
  env.replace_final("normkit/reference.py", ref + "\n# tuned\n");
  env.verify();
  json out = env.outcome();
  EXPECT_EQ(out["verdict"], "invalid") << out.dump(2);
  EXPECT_NE(out["reasons"][0].get<std::string>().find("changes the reference module"),
            std::string::npos);
  EXPECT_TRUE(env.records("verify_started").empty());
}

// A stand-in for the TPU-side tool: a well-formed, self-hashed PASS receipt at a chosen speedup.
void write_fixed_receipt_tool(const fs::path& dir, double speedup) {
  write_file_atomic(
      dir / "fixed-verify",
      "#!/usr/bin/python3\nimport hashlib, json, sys\n"
      "r = {'cmd': 'verify', 'mode': 'full', 'verdict': 'PASS', 'gates': {'parity': "
      "True, 'measure': True, 'firing': True}, 'p50_ms': {'baseline': 1.0, "
      "'candidate': " +
          std::to_string(1.0 / speedup) + "}, 'speedup': 1.0 / " + std::to_string(1.0 / speedup) +
          ", 'parity_verdict': 'PASS', 'measure_verdict': 'PASS', 'hlo_audit': "
          "{'status': 'FIRED', 'custom_call_count': 2, 'checks': {}}, "
          "'anomalies': [], 'reproduction': {'status': 'NO_CLAIM'}, 'artifact_dir': '.'}\n"
          "body = json.dumps(r, sort_keys=True, separators=(',', ':'), default=str)\n"
          "r['self_sha256'] = hashlib.sha256(body.encode()).hexdigest()\n"
          "json.dump(r, open(sys.argv[1], 'w'), indent=2, sort_keys=True)\n");
  fs::permissions(dir / "fixed-verify", fs::perms::owner_all | fs::perms::others_read |
                                            fs::perms::others_exec | fs::perms::group_read |
                                            fs::perms::group_exec);
}

TEST(VerifyCli, ToolDisagreeingWithTheCrossCheckIsCapped) {
  Authored env;
  fs::path tools = env.root / "fixed";
  fs::create_directories(tools);
  // The honest candidate measures several times faster than the reference; a tool saying 1.01
  // disagrees with kdispatch's own measurement and the verdict is capped.
  write_fixed_receipt_tool(tools, 1.01);
  auto v = env.verify({"--tool-dir", tools.string(), "--verify-cmd", "fixed-verify {receipt}"});
  json out = env.outcome();
  EXPECT_NE(out["reasons"][0].get<std::string>().find("below the bar"), std::string::npos);
  EXPECT_EQ(out["measurement"]["path"], "external tool, cross-checked by kdispatch");
  // The tolerance is the parent's own spread: on a quiet host 1.01 is far outside it and the
  // verdict is capped; on a very busy one the spread may cover it and the refutation stands.
  json cc = out["measurement"]["cross_check"];
  // Its own chip time is recorded beside the tool's.
  EXPECT_GT(cc["wall_s"].get<double>(), 0.0) << cc.dump();
  const double ratio = cc["tool_over_parent"].get<double>();
  const double tol = cc["tolerance"].get<double>();
  const bool disagrees = ratio > 1 + tol || ratio < 1 / (1 + tol);
  EXPECT_EQ(out["verdict"], disagrees ? "inconclusive" : "refuted") << out.dump(2) << v.err;
  EXPECT_EQ(out.dump().find("disagrees with the parent's") != std::string::npos, disagrees)
      << out.dump(2);
}

// The external tool's receipt stays the one the verdict reads; kdispatch's cross-check agrees
// with it, so it stands.
TEST(VerifyCli, ExternalToolAgreeingWithTheCrossCheckStands) {
  Authored env;
  auto v = env.verify(
      {"--verify-cmd",
       "kverify verify --baseline {reference} --candidate {candidate} --mode {mode} --family "
       "{family} --bar {bar} --artifact-dir {artifact_dir} --receipt {receipt}"});
  json out = env.outcome();
  EXPECT_EQ(out["measurement"]["path"], "external tool, cross-checked by kdispatch");
  json cc = out["measurement"]["cross_check"];
  EXPECT_EQ(cc["parity_verdict"], "PASS") << out.dump(2);
  EXPECT_TRUE(fs::is_regular_file(cc["receipt"].get<std::string>()));
  // The cross-check's own receipt is the parent's, signed.
  auto keyed = test::run_kdispatch(
      {"receipt", "verify", cc["receipt"].get<std::string>(), "--run-root", env.runs.string()});
  EXPECT_EQ(keyed.exit_code, 0) << keyed.out;
  EXPECT_NE(keyed.out.find("signature=valid"), std::string::npos) << keyed.out;
}

TEST(VerifyCli, TamperedReceiptIsInconclusive) {
  Authored env;
  auto v = env.verify(
      {"--verify-cmd",
       "sh -c 'kverify verify --baseline {reference} --candidate {candidate} --mode {mode} "
       "--family {family} --bar {bar} --artifact-dir {artifact_dir} --receipt {receipt}; "
       "sed -i \"s/\\\"speedup\\\": [0-9.]*/\\\"speedup\\\": 9.5/\" {receipt}'"});
  json out = env.outcome();
  EXPECT_EQ(out["verdict"], "inconclusive") << out.dump(2) << v.err;
  EXPECT_FALSE(out["receipt"]["ok"].get<bool>());
  EXPECT_EQ(out["reasons"][0], "no valid receipt");
  EXPECT_EQ(test::run_kdispatch({"receipt", "verify",
                                 (env.wiki / out["receipt"]["path"].get<std::string>()).string()})
                .exit_code,
            2);
}

// The verification's own side failing is an error to retry, never a verdict: a verify command
// whose program cannot be run, one that dies of a signal without a receipt, a chip lock that cannot
// be opened. Each exits kExitTempFail (75) naming the cause and writes no outcome.
TEST(VerifyCli, AToolOrChipThatFailsIsAnErrorNotAVerdict) {
  Authored env;
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Case> cases = {
      // A wrapper whose own program is missing (a missing top-level program is refused before).
      {{"--verify-cmd", "sh -c 'no-such-verify-tool {receipt}'"}, "could not be run (exit 127)"},
      {{"--verify-cmd", "sh -c 'kill -SEGV $$'"}, "died of signal 11 and left no receipt"},
  };
  for (const auto& c : cases) {
    auto v = env.verify(c.args);
    EXPECT_EQ(v.exit_code, 75) << c.args[1] << "\n" << v.out << v.err;
    EXPECT_NE(v.err.find(c.says), std::string::npos) << v.err;
    EXPECT_NE(v.err.find("nothing was decided about the candidate"), std::string::npos) << v.err;
    EXPECT_FALSE(fs::exists(env.run_dir() / "outcome.json")) << c.args[1];
  }
  // A chip whose lock cannot be opened (its directory is gone).
  json inv = json::parse(read_file(env.chips));
  for (auto& chip : inv["chips"])
    chip["lock"] = (env.root / "no-such-dir" / (chip["id"].get<std::string>() + ".lock")).string();
  const fs::path broken = env.root / "broken-chips.json";
  write_file_atomic(broken, inv.dump(2));
  auto v = env.verify({"--chips", broken.string()});
  EXPECT_EQ(v.exit_code, 75) << v.out << v.err;
  EXPECT_NE(v.err.find("no chip could be locked for the verification"), std::string::npos) << v.err;
  EXPECT_FALSE(fs::exists(env.run_dir() / "outcome.json"));
}

// A pre-registered reference that fails in the measuring parent's reference worker says
// nothing about the candidate: an error (verify_tool), no outcome.
TEST(VerifyCli, AReferenceThatFailsIsAnErrorNotAVerdict) {
  test::ExampleEnv env;
  const fs::path ref = env.home() / "normkit/reference.py";
  write_file_atomic(ref, read_file(ref) +
                             "\n\ndef workload(x, scale):\n    raise "
                             "RuntimeError('the reference is broken')\n");
  // On the home repository's integration branch, which the author's branch starts from.
  examples::commit_example(env.home(), "integration", "K4(rms-norm): a broken reference");
  auto a = env.author(test::ExampleEnv::script("honest-author.json"));
  ASSERT_EQ(a.exit_code, 0) << a.out << a.err;
  auto v = env.verify();
  EXPECT_EQ(v.exit_code, 75) << v.out << v.err;
  EXPECT_NE(v.err.find("could not run the reference"), std::string::npos) << v.err;
  EXPECT_NE(v.err.find("the reference is broken"), std::string::npos) << v.err;
  EXPECT_FALSE(fs::exists(env.run_dir() / "outcome.json"));
}

// A verify command that leaves a FIFO where the receipt goes (a plain read would hang verify
// forever), then one that leaves a link to a host file: the run ends, inconclusive, with the
// receipt named invalid, and no hash of the host file is recorded.
TEST(VerifyCli, AReceiptThatIsAFifoOrALinkEndsInconclusive) {
  Authored env;
  const auto start = std::chrono::steady_clock::now();
  auto v = env.verify({"--verify-cmd", "sh -c 'rm -f {receipt}; mkfifo {receipt}'"});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::minutes(2));
  json out = env.outcome();
  EXPECT_EQ(out["verdict"], "inconclusive") << out.dump(2) << v.err;
  EXPECT_FALSE(out["receipt"]["ok"].get<bool>());
  EXPECT_NE(out.dump().find("is a FIFO, not a regular file"), std::string::npos) << out.dump(2);
  const fs::path receipt = env.wiki / out["receipt"]["path"].get<std::string>();
  // The same place holding a link to a host file: `receipt verify` names it and reads nothing.
  fs::remove(receipt);
  fs::create_symlink("/etc/passwd", receipt);
  auto cli = test::run_kdispatch({"receipt", "verify", receipt.string()});
  EXPECT_EQ(cli.exit_code, 2);
  EXPECT_NE((cli.out + cli.err).find("is a symbolic link"), std::string::npos)
      << cli.out << cli.err;
  const std::string journal = read_file(env.journal());
  EXPECT_EQ(journal.find(sha256_hex(read_file("/etc/passwd"))), std::string::npos);
}

// Whether a kdispatch process has `path` open (the verifier waiting on a chip's lock file).
bool kdispatch_holds_open(const fs::path& path) {
  std::error_code ec;
  for (const auto& proc : fs::directory_iterator("/proc", ec)) {
    std::string comm;
    try {
      comm = read_file(proc.path() / "comm");
    } catch (const std::exception&) {
      continue;
    }
    if (comm.rfind("kdispatch", 0) != 0) continue;
    std::error_code fd_ec;
    for (const auto& fd : fs::directory_iterator(proc.path() / "fd", fd_ec)) {
      std::error_code link_ec;
      if (fs::read_symlink(fd.path(), link_ec) == path) return true;
    }
  }
  return false;
}

TEST(VerifyCli, WaitsForAChipLockHeldByAnotherProcess) {
  Authored env;
  // Someone runs by hand on the verifier's chip, the way people do: flock(1) on its lock file,
  // held here until the verifier is seen waiting for it (no timing assumption).
  const fs::path lock = env.root / "chip1.lock", held = env.root / "held",
                 release = env.root / "release";
  auto holder = test::run_process({"sh", "-c",
                                   "flock " + lock.string() + " sh -c 'touch " + held.string() +
                                       "; while [ ! -e " + release.string() +
                                       " ]; do sleep 0.1; done' >/dev/null 2>&1 & echo started"});
  ASSERT_EQ(holder.exit_code, 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(5);
  while (!fs::exists(held) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(fs::exists(held)) << "flock(1) never took the lock";
  auto verify = std::async(std::launch::async, [&] { return env.verify(); });
  while (!kdispatch_holds_open(lock) && std::chrono::steady_clock::now() < deadline &&
         verify.wait_for(std::chrono::milliseconds(100)) == std::future_status::timeout) {
  }
  EXPECT_EQ(verify.wait_for(std::chrono::seconds(1)), std::future_status::timeout)
      << "the verifier ran while chip 1 was held";
  write_file_atomic(release, "");
  auto v = verify.get();
  EXPECT_NE(v.err.find("waiting for a chip lock"), std::string::npos) << v.err;
  EXPECT_EQ(env.outcome()["verifier"]["chip"], "1");
}

}  // namespace
}  // namespace kd

namespace kd {
namespace {

TEST(VerifyCli, LlmVerifierReportIsCheckedAgainstTheReceiptAndFiled) {
  Authored env;
  auto v =
      env.verify({"--provider", "fake", "--script", test::ExampleEnv::script("verifier.json")});
  json out = env.outcome();
  ASSERT_TRUE(out["receipt"]["ok"].get<bool>()) << v.err;
  EXPECT_EQ(out["llm_verifier"]["end_reason"], "finished") << out.dump(2);
  EXPECT_TRUE(out["llm_verifier"]["accepted"].get<bool>());
  // Its transcript is intact, and its head is the one the outcome records.
  contract::ChainReport chain =
      contract::verify_chain_file(env.run_dir() / "verifier/transcript.jsonl");
  ASSERT_TRUE(chain.ok) << chain.reason;
  EXPECT_EQ(out["transcript_heads"]["verifier"], chain.head);
  // Its first report quoted a number the receipt does not hold and had no audit line: refused.
  std::string transcript = read_file(env.run_dir() / "verifier/transcript.jsonl");
  EXPECT_NE(transcript.find("the number 3.14 is not in the receipt"), std::string::npos);
  EXPECT_NE(transcript.find("hlo_dump: no audit line"), std::string::npos);
  // The accepted sections are filed verbatim, with the receipt's own speedup.
  std::string filing = read_file(env.run_dir() / "filing.md");
  EXPECT_NE(filing.find("Hypothesis-firing audit: HYPOTHESIS FIRING CONFIRMED — the receipt's"),
            std::string::npos)
      << filing;
  std::string receipt = read_file(env.wiki / out["receipt"]["path"].get<std::string>());
  size_t at = filing.find("| speedup ");
  ASSERT_NE(at, std::string::npos) << filing;
  std::string quoted = filing.substr(at + 10, filing.find(' ', at + 10) - at - 10);
  EXPECT_NE(receipt.find(quoted), std::string::npos) << quoted;
  EXPECT_NE(filing.find("Transcript head: verifier " + chain.head), std::string::npos);
}

}  // namespace
}  // namespace kd
