#include "verify/parent_receipt.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "common/time.h"
#include "contract/receipt_signature.h"

namespace kd::verify {

using json = nlohmann::json;

std::string per_round_json(const ParentMeasurement& m) {
  return m.timing.value("per_round", json::object()).dump(2) + "\n";
}

std::string parent_receipt(const ParentReceiptInput& in) {
  const ParentMeasurement& m = *in.m;
  json timing = m.timing;
  timing.erase("per_round");
  if (!in.per_round_file.empty())
    timing["per_round"] = {{"file", in.per_round_file}, {"sha256", in.per_round_sha256}};
  const bool parity = m.parity_verdict == "PASS";
  const bool measured = m.measured() && parity;
  const bool measure = measured && m.anomalies.empty();
  // What the parent can say about firing: the answers came from the candidate's own box, which
  // held no reference, and its source is not the reference's.
  const bool own_code = in.candidate_sha256 != in.reference_sha256;
  const bool fired = parity && own_code;
  json repro = {{"author_claim_p50", nullptr}, {"status", "NO_CLAIM"}};
  if (in.author_claim_ms > 0 && measured) {
    const double ratio = m.p50_candidate_ms / in.author_claim_ms;
    repro = {{"author_claim_p50", in.author_claim_ms},
             {"candidate_p50", m.p50_candidate_ms},
             {"ratio", ratio},
             {"status", ratio > 2 || ratio < 0.5 ? "DIVERGES" : "MATCHES"}};
  }
  json gates = {{"parity", parity}, {"measure", measure}, {"firing", fired}};
  json r = {
      {"kgate_version", "kdispatch-parent-1"},
      {"cmd", "verify"},
      {"measured_by", "kdispatch measuring parent"},
      {"mode", in.mode},
      {"family", in.family},
      {"bar", in.bar},
      {"seed_commitment", m.seed_commitment},
      {"worker", in.worker},
      {"argv", json::array()},
      {"timestamp", utc_now_rfc3339()},
      {"baseline", {{"path", in.reference_path}, {"sha256", in.reference_sha256}}},
      {"candidate",
       {{"path", in.candidate_path},
        {"sha256", in.candidate_sha256},
        {"entry", m.candidate_entry}}},
      {"input_shapes", m.input_shapes},
      {"inputs_sha256", m.inputs_sha256},
      {"oracle_type", "fp64"},
      {"parity", m.parity},
      {"parity_verdict", m.parity_verdict},
      {"timing", timing},
      {"p50_ms",
       {{"baseline", measured ? json(m.p50_reference_ms) : json()},
        {"candidate", measured ? json(m.p50_candidate_ms) : json()}}},
      {"speedup", measured ? json(m.speedup) : json()},
      {"speedup_spread",
       {{"low", m.speedup_low},
        {"high", m.speedup_high},
        {"rule", "p25(baseline ms) / p75(candidate ms), p75 / p25"}}},
      {"measure_verdict", measure ? "PASS" : "FAIL"},
      {"hlo_audit",
       {{"status", fired ? "FIRED" : "NOT_FIRED"},
        {"custom_call_count", fired ? 1 : 0},
        {"checks",
         {{"answered_from_its_own_box", parity},
          {"reference_absent_from_candidate_box", true},
          {"source_differs_from_reference", own_code}}}}},
      {"reproduction", repro},
      {"gates", gates},
      {"anomalies", m.anomalies},
      {"artifact_dir", in.artifact_dir},
      {"verdict", parity && measure && fired ? "PASS" : "FAIL"},
  };
  if (!in.environment.is_null()) r["environment"] = in.environment;
  return contract::sign_and_seal_receipt(r.dump(), in.signing_key);
}

}  // namespace kd::verify
