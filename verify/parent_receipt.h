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
  // The per-round times, kept beside the receipt rather than in it (a reader quoting the
  // receipt's numbers should meet its figures, not a hundred raw samples): its file name and
  // sha256, which the receipt binds.
  std::string per_round_file, per_round_sha256;
  // Where the measurement ran, when the pipeline says (a Slurm job's chip, node, the author's
  // last chip); null: nothing added.
  nlohmann::json environment;
};

// The per-round times of `m` as the file beside the receipt holds them.
std::string per_round_json(const ParentMeasurement& m);

// The receipt's text, sealed and (with a key) signed.
std::string parent_receipt(const ParentReceiptInput& in);

}  // namespace kd::verify
