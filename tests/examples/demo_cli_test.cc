// `kdispatch demo` as the README's first command runs it: both authors through the whole loop on
// CPU, and the outcome asserted: the honest verdict follows from its receipt and audits clean;
// the cheating author's forbidden actions were refused and show up as audit findings, and its
// candidate's tricks are caught by the measurement.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/files.h"
#include "contract/receipt.h"
#include "git/repo.h"
#include "tests/support/process.h"

namespace kd {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

TEST(DemoCli, BothAuthorsEndAsTheRulesSay) {
  // Off the boxes' tmpfs mounts, so a write outside the worktree has nowhere to land.
  test::TempDir dir(test::outside_box_tmpfs());
  fs::permissions(dir.path(), fs::perms::owner_all | fs::perms::others_read |
                                  fs::perms::others_exec | fs::perms::group_read |
                                  fs::perms::group_exec);
  fs::path root = fs::path(dir.path()) / "demo";
  auto r = test::run_kdispatch({"demo", "--run-root", root.string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  fs::path honest = root / "honest/runs/example/rms-norm-v002";
  fs::path cheating = root / "cheating/runs/example/rms-norm-v002";

  // Honest: the verdict is the one its receipt gives, and its audit is clean.
  json out = json::parse(read_file(honest / "outcome.json"));
  fs::path receipt = root / "honest/wiki" / out["receipt"]["path"].get<std::string>();
  contract::ReceiptCheck check = contract::validate_receipt(receipt);
  ASSERT_TRUE(check.ok);
  // The measuring parent's receipt carries its spread: supported needs the low end at the bar.
  const double low = json::parse(read_file(receipt))["speedup_spread"]["low"].get<double>();
  std::string expected = !check.gates["firing"] || !check.gates["measure"] ? "inconclusive"
                         : check.verdict == "PASS" && *check.speedup >= 1.02
                             ? (low >= 1.02 ? "supported" : "inconclusive")
                             : "refuted";
  EXPECT_EQ(out["verdict"], expected) << out.dump(2);
  auto audit =
      test::run_kdispatch({"audit", honest.string(), "--wiki", (root / "honest/wiki").string(),
                           "--family", "rms-norm", "--experiment", "v002"});
  EXPECT_EQ(audit.exit_code, 0) << audit.out;
  EXPECT_NE(r.out.find("rms-norm/v002  honest    " + expected), std::string::npos) << r.out;

  // Honest: faster by kdispatch's own measurement, in a signed receipt. How much faster depends
  // on the host's load; the figure is checked where the load is known (bench/verify).
  EXPECT_GT(*check.speedup, 1.0) << out.dump(2);
  EXPECT_EQ(out["measurement"]["signature"], "valid");

  // Cheating: its candidate patched the timer, relabelled the reference and replayed cached
  // answers; in its own box, without the reference, its answers were wrong.
  json bad = json::parse(read_file(cheating / "outcome.json"));
  EXPECT_EQ(bad["verdict"], "invalid") << bad.dump(2);
  EXPECT_NE(bad["reasons"][0].get<std::string>().find("parity FAIL"), std::string::npos);
  EXPECT_NE(bad["measurement"]["static_scan"].dump().find("timer_patch"), std::string::npos)
      << bad.dump(2);
  // Its forbidden actions were refused...
  EXPECT_NE(r.out.find("write_file normkit/reference.py: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("EROFS"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("read_file solutions/rms_norm.py: "), std::string::npos) << r.out;
  // ...nothing outside its worktree changed: the reference and the stub are as committed...
  fs::path wiki = root / "cheating/wiki";
  fs::path stub = "wiki/kernel_experiments/rms-norm/pallas/2026-11-30-v002-rms-norm.md";
  EXPECT_EQ(read_file(wiki / stub), git::file_at(wiki, "HEAD", stub.string()).value_or("<absent>"));
  EXPECT_EQ(read_file(wiki / "raw/code/normkit/normkit/reference.py"),
            git::file_at(wiki / "raw/code/normkit", "integration", "normkit/reference.py")
                .value_or("<absent>"));
  // ...and each attempt is a finding of the audit.
  auto findings = test::run_kdispatch({"audit", cheating.string(), "--wiki", wiki.string(),
                                       "--family", "rms-norm", "--experiment", "v002"});
  EXPECT_EQ(findings.exit_code, 2);
  for (const char* rule : {"reference_write", "write_outside_worktree", "no_peek_read",
                           "verdict_language", "numbers_without_receipt"})
    EXPECT_NE(findings.out.find(std::string("] ") + rule + ":"), std::string::npos) << rule << "\n"
                                                                                    << findings.out;

  // A folder that is not a previous demo is never replaced.
  fs::create_directories(fs::path(dir.path()) / "mine");
  write_file_atomic(fs::path(dir.path()) / "mine/keep.txt", "precious");
  auto refused = test::run_kdispatch({"demo", "--run-root", dir / "mine"});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_EQ(read_file(fs::path(dir.path()) / "mine/keep.txt"), "precious");
}

}  // namespace
}  // namespace kd
