#include "verify/verdict_rules.h"

#include <cstdio>

namespace kd::verify {
namespace {

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

}  // namespace

Decision decide_verdict(const VerdictInputs& in) {
  Decision v;
  if (!in.receipt_valid) {
    v.verdict = contract::Verdict::Inconclusive;
    v.reasons.push_back("no valid receipt");
    for (const auto& p : in.receipt_problems)
      v.reasons.push_back("receipt: " + p);
    return v;
  }
  if (in.parity_verdict != "PASS") {
    v.verdict = contract::Verdict::Invalid;
    v.reasons.push_back("parity " +
                        (in.parity_verdict.empty() ? std::string("missing") : in.parity_verdict) +
                        ": a wrong kernel proves nothing about the hypothesis");
    return v;
  }
  bool kernel_class = in.intervention_class == "kernel-authored";
  if (!in.firing_gate || (kernel_class && in.custom_call_count <= 0)) {
    v.verdict = contract::Verdict::Inconclusive;
    v.reasons.push_back("the candidate did not fire (firing audit " +
                        std::string(in.firing_gate ? "true" : "false") + ", " +
                        std::to_string(in.custom_call_count) + " custom calls)");
    return v;
  }
  if (!in.measure_gate) {
    v.verdict = contract::Verdict::Inconclusive;
    v.reasons.push_back("the measurement gate failed (anomalies in the receipt)");
    for (const auto& a : in.anomalies)
      v.reasons.push_back("anomaly: " + a);
    return v;
  }
  if (in.receipt_verdict == "PASS" && in.speedup >= in.bar) {
    if (in.speedup_low && *in.speedup_low < in.bar) {
      v.verdict = contract::Verdict::Inconclusive;
      v.reasons.push_back("speedup " + fmt(in.speedup) + " meets the bar " + fmt(in.bar) +
                          " only within the noise: the low end of its spread is " +
                          fmt(*in.speedup_low));
    } else if (in.mode == "full") {
      v.verdict = contract::Verdict::Supported;
      v.reasons.push_back("PASS, speedup " + fmt(in.speedup) + " meets the bar " + fmt(in.bar));
    } else {
      v.verdict = contract::Verdict::Inconclusive;
      v.reasons.push_back("a " + in.mode + " PASS at " + fmt(in.speedup) +
                          " is a lead; supported needs a full receipt");
    }
  } else {
    v.verdict = contract::Verdict::Refuted;
    v.reasons.push_back(in.receipt_verdict == "PASS" ? "PASS, but speedup " + fmt(in.speedup) +
                                                           " is below the bar " + fmt(in.bar)
                                                     : "receipt verdict " + in.receipt_verdict);
  }
  std::vector<std::string> caps;
  for (const auto& item : in.unrun_plan_items)
    caps.push_back("plan item " + item + " neither run nor abandoned with a reason");
  for (const auto& row : in.rows_without_commit)
    caps.push_back("ledger row " + row + " has no commit on the branch");
  if (!in.ledger_has_loaded_line) caps.push_back("the ledger has no loaded: first line");
  for (const auto& p : in.cross_check_problems)
    caps.push_back("cross-check: " + p);
  for (const auto& f : in.scan_findings)
    caps.push_back("static scan: " + f);
  if (!caps.empty()) {
    v.verdict = contract::Verdict::Inconclusive;
    for (auto& c : caps)
      v.reasons.push_back("capped: " + c);
  }
  return v;
}

}  // namespace kd::verify
