// The receipt of kdispatch's own measurement, in kgate's verify format (so `receipt verify`, the
// audit and kgate's own readers take it) plus what only the parent knows: the spread of the
// per-round speedups, the calls per round, the seed commitment. Signed when the dispatcher's key
// is given (contract/receipt_signature.h).
#pragma once

#include <string>

#include "verify/measuring_parent.h"

namespace kd::verify {

struct ParentReceiptInput {
  const ParentMeasurement* m = nullptr;
  std::string mode, family, bar_text;
  double bar = 0;
  std::string reference_path, reference_sha256;
  std::string candidate_path, candidate_sha256;
  std::string artifact_dir;
  std::string worker;          // the worker program's name and sha256
  double author_claim_ms = 0;  // 0: none
  std::string signing_key;     // empty: sealed (self_sha256) but not signed
};

// The receipt's text, sealed and (with a key) signed.
std::string parent_receipt(const ParentReceiptInput& in);

// The measure gate's verdict by the parent's rules: measured, and no anomaly.
bool parent_measure_gate(const ParentMeasurement& m);

}  // namespace kd::verify
