// kdispatch's own measurement (docs/verification.md): the trusted parent that never imports the
// candidate. It holds a secret seed, has an inputs worker (the reference's module, in a process of
// its own in the reference's box) make fresh inputs for every call, sends the same inputs to the
// reference and candidate workers (each in its own box), times every batch on its own clock from
// the first byte sent to the last byte answered, checks every output of every batch against the
// reference's itself, and alone writes the receipt. The workers are
// reached only through verify/worker_process.h.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "verify/worker_process.h"

namespace kd::verify {

struct ParentPlan {
  std::string mode = "full";                                  // screen | full: how many rounds
  std::string reference_module, candidate_module;             // paths inside their boxes
  std::vector<std::string> reference_roots, candidate_roots;  // import roots inside the boxes
  std::vector<std::string> candidate_entries = {"workload_cand", "custom_workload", "workload"};
  double multiplier = 2.0;  // parity gate: multiplier x the reference's own error floor
  int parity_sets = 2;      // fresh inputs checked against the float64 oracle
  int rounds = 0;           // 0: 8 for screen, 20 for full
  // The reference's time per timed batch, roughly: long enough that a batch's fixed cost (two
  // wake-ups, a header) and the host's noise average out over its calls.
  double round_target_s = 0.03;
  // At most this many calls per batch: each call needs a fresh input set, and making one can
  // cost as much as a call (the example's does), so a larger batch costs the verification more
  // than it adds to the measurement.
  int max_calls_per_round = 4;
  double call_timeout_s = 300;
  // "cpu": the CPU time the worker's box used during each call (a CPU chip, where the kernel's
  // cost is CPU time and a busy host's waiting is not); "wall": the wall clock (accelerators).
  std::string clock = "wall";
  // A candidate box using more CPU than this fraction of the reference's timed batch while the
  // reference runs is an anomaly: it was slowing the reference.
  double idle_cpu_fraction = 0.25;
};

struct ParentMeasurement {
  // An environment failure of the reference side (its worker could not load, make or run): no
  // measurement, no receipt.
  std::string reference_error;
  std::string parity_verdict = "FAIL";  // PASS | FAIL
  nlohmann::json parity = nlohmann::json::object();
  std::string candidate_entry;
  nlohmann::json input_shapes = nlohmann::json::array();
  std::string inputs_sha256;  // of the first parity inputs
  int calls_per_round = 0, rounds = 0;
  std::vector<double> reference_ms, candidate_ms;    // per call, one per round
  std::vector<std::string> orders;                   // candidate_first | baseline_first
  nlohmann::json timing = nlohmann::json::object();  // per ordering, as kgate's receipt has it
  double p50_reference_ms = 0, p50_candidate_ms = 0;
  double speedup = 0;
  // The speedup's spread: p25(reference) / p75(candidate) and p75(reference) / p25(candidate)
  // of the per-call times.
  double speedup_low = 0, speedup_high = 0;
  std::vector<std::string> anomalies;
  std::string seed_commitment;  // sha256 of the secret, which no worker ever saw
  // The whole cross-check on the chip, from its boxes' start to its workers' end: chip time the
  // verification spends beyond the tool's own.
  double wall_s = 0;
  bool measured() const { return !candidate_ms.empty(); }
};

// Runs the whole protocol on three started workers: `maker` (the reference's module, making
// inputs), `reference` and `candidate`. Never throws for what the candidate does (a
// crash, a wrong answer, a stall is a FAIL with its reason); throws kd::Error only for the
// parent's own environment.
ParentMeasurement measure_with_workers(Worker& maker, Worker& reference, Worker& candidate,
                                       const ParentPlan& plan);

// The p-th quantile (0..1) of `v` by linear interpolation; 0 for an empty vector.
double quantile(std::vector<double> v, double p);

}  // namespace kd::verify
