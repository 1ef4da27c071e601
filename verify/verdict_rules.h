// Verdicts by fixed rules (docs/dispatcher.md), from a validated receipt and the author's paper
// trail. Author numbers never enter: only the receipt's.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "contract/verdict.h"

namespace kd::verify {

struct VerdictInputs {
  // The verifier's receipt, as validated (audit's receipt check).
  bool receipt_valid = false;
  std::vector<std::string> receipt_problems;
  std::string receipt_verdict;  // PASS | FAIL | ...
  std::string mode;             // screen | full
  std::string parity_verdict;   // PASS | FAIL
  bool measure_gate = false;
  std::vector<std::string> anomalies;  // the receipt's, named in the reason when the gate fails
  bool firing_gate = false;            // the receipt's firing audit
  long custom_call_count = 0;
  double speedup = 0;  // baseline p50 / candidate p50, from the receipt
  // The low end of the measurement's spread (the parent's p25 of the reference's times over the
  // p75 of the candidate's), when the receipt has one: supported needs it at the bar too, so a
  // candidate no faster than the reference cannot come out supported on timing noise.
  std::optional<double> speedup_low;
  // The parent's cross-check of an external tool's receipt: each disagreement caps the verdict.
  std::vector<std::string> cross_check_problems;
  // The static scan of the candidate (audit/candidate_scan.h): findings cap, never invalidate.
  std::vector<std::string> scan_findings;
  // The pre-registration.
  double bar = 0;
  std::string intervention_class;  // refute | flag | xla-rewrite | kernel-authored
  // The author's paper trail; any defect caps the verdict at inconclusive.
  std::vector<std::string> unrun_plan_items;  // neither run nor abandoned with a reason
  std::vector<std::string> rows_without_commit;
  bool ledger_has_loaded_line = false;
};

struct Decision {
  contract::Verdict verdict = contract::Verdict::Inconclusive;
  std::vector<std::string> reasons;  // why, in order of the rules
};

Decision decide_verdict(const VerdictInputs& in);

}  // namespace kd::verify
