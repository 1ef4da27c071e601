#include "verify/verdict_rules.h"

#include <gtest/gtest.h>

#include "common/errors.h"
#include "verify/verify_command.h"

namespace kd::verify {
namespace {

VerdictInputs passing() {
  VerdictInputs in;
  in.receipt_valid = true;
  in.receipt_verdict = "PASS";
  in.mode = "full";
  in.parity_verdict = "PASS";
  in.measure_gate = true;
  in.firing_gate = true;
  in.custom_call_count = 2;
  in.speedup = 1.30;
  in.bar = 1.02;
  in.intervention_class = "kernel-authored";
  in.ledger_has_loaded_line = true;
  return in;
}

TEST(Verdict, FixedRulesInOrder) {
  EXPECT_EQ(decide_verdict(passing()).verdict, contract::Verdict::Supported);

  auto in = passing();
  in.receipt_valid = false;
  in.receipt_problems = {"self_sha256 does not match"};
  auto v = decide_verdict(in);
  EXPECT_EQ(v.verdict, contract::Verdict::Inconclusive);
  EXPECT_EQ(v.reasons.back(), "receipt: self_sha256 does not match");

  in = passing();
  in.parity_verdict = "FAIL";
  in.receipt_verdict = "FAIL";
  EXPECT_EQ(decide_verdict(in).verdict, contract::Verdict::Invalid);

  in = passing();
  in.custom_call_count = 0;
  EXPECT_EQ(decide_verdict(in).verdict, contract::Verdict::Inconclusive);
  in.intervention_class = "xla-rewrite";  // zero custom calls are expected without a kernel
  EXPECT_EQ(decide_verdict(in).verdict, contract::Verdict::Supported);
  in.firing_gate = false;
  EXPECT_EQ(decide_verdict(in).verdict, contract::Verdict::Inconclusive);

  in = passing();
  in.speedup = 1.01;
  v = decide_verdict(in);
  EXPECT_EQ(v.verdict, contract::Verdict::Refuted);
  EXPECT_EQ(v.reasons[0], "PASS, but speedup 1.01 is below the bar 1.02");
  in.speedup = 1.02;  // at the bar is enough
  EXPECT_EQ(decide_verdict(in).verdict, contract::Verdict::Supported);

  in = passing();
  in.mode = "screen";
  EXPECT_EQ(decide_verdict(in).verdict, contract::Verdict::Inconclusive);
}

TEST(Verdict, PaperTrailDefectsCapAtInconclusive) {
  auto in = passing();
  in.unrun_plan_items = {"cand3"};
  in.rows_without_commit = {"cand2"};
  in.ledger_has_loaded_line = false;
  auto v = decide_verdict(in);
  EXPECT_EQ(v.verdict, contract::Verdict::Inconclusive);
  ASSERT_EQ(v.reasons.size(), 4u);
  EXPECT_EQ(v.reasons[1], "capped: plan item cand3 neither run nor abandoned with a reason");
  EXPECT_EQ(v.reasons[2], "capped: ledger row cand2 has no commit on the branch");
  EXPECT_EQ(v.reasons[3], "capped: the ledger has no loaded: first line");
  in.speedup = 0.9;  // a refutation is capped too
  EXPECT_EQ(decide_verdict(in).verdict, contract::Verdict::Inconclusive);
}

TEST(VerifyCommand, SubstitutesInsideWordsWithoutAShell) {
  auto argv = expand_verify_command(
      "kverify verify --baseline {reference} --x='{family} v' --bar={bar}",
      {{"reference", "/r/ref.py"}, {"family", "a b;rm -rf /"}, {"bar", "1.02"}});
  EXPECT_EQ(argv, (std::vector<std::string>{"kverify", "verify", "--baseline", "/r/ref.py",
                                            "--x=a b;rm -rf / v", "--bar=1.02"}));
  auto kgate = expand_verify_command(kKgateTemplate, {{"reference", "r"},
                                                      {"candidate", "c"},
                                                      {"mode", "full"},
                                                      {"family", "f"},
                                                      {"bar", "1.1"},
                                                      {"claim", "0.5"},
                                                      {"artifact_dir", "a"},
                                                      {"receipt", "a/receipt.json"}});
  EXPECT_EQ(kgate.front(), "kgate");
  EXPECT_EQ(kgate.back(), "a/receipt.json");
  try {
    expand_verify_command("run {nope}", {{"bar", "1"}});
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "verify command: unknown placeholder {nope} (known: {bar})");
  }
  EXPECT_THROW(expand_verify_command("run 'x", {}), Error);
  EXPECT_THROW(expand_verify_command("   ", {}), Error);
}

// A median at the bar is not enough when a quarter of the rounds fall below it: a copy of the
// reference must not come out supported on noise.
TEST(Verdict, SupportedNeedsTheSpreadAtTheBar) {
  auto in = passing();
  in.speedup = 1.035;
  in.speedup_low = 0.99;
  auto v = decide_verdict(in);
  EXPECT_EQ(v.verdict, contract::Verdict::Inconclusive);
  EXPECT_NE(v.reasons[0].find("within the noise"), std::string::npos) << v.reasons[0];
  in.speedup_low = 1.03;
  EXPECT_EQ(decide_verdict(in).verdict, contract::Verdict::Supported);
}

TEST(Verdict, CrossCheckAndScanFindingsCapButNeverInvalidate) {
  auto in = passing();
  in.cross_check_problems = {"the tool's speedup 2.5 disagrees with the parent's 1.01"};
  auto v = decide_verdict(in);
  EXPECT_EQ(v.verdict, contract::Verdict::Inconclusive);
  EXPECT_EQ(v.reasons.back(), "capped: cross-check: " + in.cross_check_problems[0]);

  in = passing();
  in.scan_findings = {"normkit/rms_norm.py:4: replaces a clock or timer: time.perf_counter ="};
  v = decide_verdict(in);
  EXPECT_EQ(v.verdict, contract::Verdict::Inconclusive);
  EXPECT_NE(v.reasons.back().find("static scan"), std::string::npos);

  // A refuted candidate's findings cap it too, but nothing here makes a verdict invalid.
  in.speedup = 0.9;
  EXPECT_EQ(decide_verdict(in).verdict, contract::Verdict::Inconclusive);
}

TEST(Verdict, FailedMeasureGateNamesTheAnomalies) {
  auto in = passing();
  in.measure_gate = false;
  in.anomalies = {"ordering-dependent speedup: 4.3 vs 1.5"};
  auto v = decide_verdict(in);
  EXPECT_EQ(v.verdict, contract::Verdict::Inconclusive);
  EXPECT_EQ(v.reasons.back(), "anomaly: ordering-dependent speedup: 4.3 vs 1.5");
}

}  // namespace
}  // namespace kd::verify
