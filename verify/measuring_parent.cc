#include "verify/measuring_parent.h"

#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "common/errors.h"
#include "common/sha256.h"
#include "contract/receipt_signature.h"
#include "verify/output_check.h"

namespace kd::verify {
namespace {

using json = nlohmann::json;

std::string random_secret() {
  std::string s(32, '\0');
  std::size_t got = 0;
  while (got < s.size()) {
    ssize_t k = ::getrandom(s.data() + got, s.size() - got, 0);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) throw_sys("getrandom", "the measurement's secret seed", errno);
    got += std::size_t(k);
  }
  return s;
}

// Seed i of this measurement: HMAC(secret, i), so no worker can guess the next inputs.
long long seed_for(const std::string& secret, long long i) {
  const std::string mac = contract::hmac_sha256(secret, "kdispatch-seed:" + std::to_string(i));
  unsigned long long v = 0;
  for (int b = 0; b < 4; ++b)
    v = (v << 8) | static_cast<unsigned char>(mac[b]);
  return static_cast<long long>(v & 0x7fffffff);
}

// Splits a worker's flat answer into sets as its header's "sets" counts say.
std::vector<std::vector<WireArray>> split_sets(const Frame& f, std::size_t expect_sets,
                                               const std::string& who) {
  const json sets = f.header.value("sets", json());
  if (!sets.is_array() || sets.size() != expect_sets)
    throw Error(who + " answered " + (sets.is_array() ? std::to_string(sets.size()) : "no") +
                " output sets for " + std::to_string(expect_sets) + " input sets");
  std::vector<std::vector<WireArray>> out;
  std::size_t at = 0;
  for (const auto& n : sets) {
    if (!n.is_number_unsigned() || at + n.get<std::size_t>() > f.arrays.size())
      throw Error(who + " answered set sizes that do not add up to its arrays");
    out.emplace_back(f.arrays.begin() + long(at),
                     f.arrays.begin() + long(at + n.get<std::size_t>()));
    at += n.get<std::size_t>();
  }
  if (at != f.arrays.size()) throw Error(who + " answered arrays beyond its sets");
  return out;
}

struct Inputs {
  json sets = json::array();  // arrays per set
  std::vector<WireArray> arrays;
  std::size_t count() const { return sets.size(); }
};

std::string fmt(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

double median(std::vector<double> v) {
  return quantile(std::move(v), 0.5);
}

class Protocol {
 public:
  Protocol(Worker& maker, Worker& ref, Worker& cand, const ParentPlan& plan)
      : maker_(maker), ref_(ref), cand_(cand), plan_(plan), secret_(random_secret()) {}

  ParentMeasurement run() {
    m_.seed_commitment = sha256_hex(secret_);
    try {
      load();
    } catch (const RefError& e) {
      m_.reference_error = e.what();
      return m_;
    }
    if (!m_.parity.contains("error")) {
      try {
        parity();
        if (m_.parity_verdict == "PASS") timing();
      } catch (const RefError& e) {
        m_.reference_error = e.what();
      }
    }
    return m_;
  }

 private:
  // The clock the speedup is read from: on a CPU chip the CPU time the worker's box used during
  // the call (waiting for a core on a busy host is not the kernel's time), else the wall clock.
  double clock_of(const TimedFrame& t) const {
    return plan_.clock == "cpu" ? t.cpu_seconds : t.seconds;
  }

  // A failure of the trusted side: reported apart from the candidate's.
  struct RefError : Error {
    using Error::Error;
  };

  // A call to a worker of the trusted side (`w`: the reference or the input maker).
  Frame trusted_call(Worker& w, const json& h, const std::vector<WireArray>& a = {}) {
    TimedFrame t;
    try {
      t = w.call(h, a, plan_.call_timeout_s);
    } catch (const Error& e) {
      throw RefError("the " + w.name() + " worker: " + e.what());
    }
    if (!t.frame.header.value("ok", false))
      throw RefError("the " + w.name() + " worker failed at " + h.value("op", std::string()) +
                     ": " + t.frame.header.value("error", std::string("(no error text)")));
    last_seconds_ = clock_of(t);
    return std::move(t.frame);
  }
  Frame ref_call(const json& h, const std::vector<WireArray>& a = {}) {
    return trusted_call(ref_, h, a);
  }

  // A candidate failure ends the measurement with parity FAIL and the reason.
  bool cand_call(const json& h, const std::vector<WireArray>& a, Frame& out, double& seconds) {
    try {
      TimedFrame t = cand_.call(h, a, plan_.call_timeout_s);
      if (!t.frame.header.value("ok", false)) {
        fail("the candidate failed at " + h.value("op", std::string()) + ": " +
             t.frame.header.value("error", std::string("(no error text)")));
        return false;
      }
      out = std::move(t.frame);
      seconds = clock_of(t);
      return true;
    } catch (const Error& e) {
      fail(std::string("the candidate worker: ") + e.what());
      return false;
    }
  }

  void fail(const std::string& why) {
    m_.parity_verdict = "FAIL";
    m_.parity["verdict"] = "FAIL";
    m_.parity["error"] = why;
  }

  void load() {
    const json ref_load = {{"op", "load"},
                           {"path", plan_.reference_module},
                           {"roots", plan_.reference_roots},
                           {"entries", {"workload"}}};
    trusted_call(maker_, ref_load);
    ref_call(ref_load);
    Frame f;
    double s = 0;
    if (cand_call({{"op", "load"},
                   {"path", plan_.candidate_module},
                   {"roots", plan_.candidate_roots},
                   {"entries", plan_.candidate_entries}},
                  {}, f, s))
      m_.candidate_entry = f.header.value("entry", std::string());
  }

  Inputs make(int n) {
    json seeds = json::array();
    for (int i = 0; i < n; ++i)
      seeds.push_back(seed_for(secret_, next_seed_++));
    // A third worker makes the inputs: the reference's own process stays as idle between its
    // timed batches as the candidate's, so neither is favoured by the host's scheduler.
    Frame f = trusted_call(maker_, {{"op", "make"}, {"seeds", seeds}});
    Inputs in;
    in.sets = f.header.value("sets", json());
    std::size_t total = 0;
    if (!in.sets.is_array() || in.sets.size() != std::size_t(n))
      throw RefError("the inputs worker made no input sets");
    for (const auto& k : in.sets)
      total += k.get<std::size_t>();
    if (total != f.arrays.size()) throw RefError("the inputs worker's input sets do not add up");
    in.arrays = std::move(f.arrays);
    return in;
  }

  std::vector<std::vector<WireArray>> ref_run(const Inputs& in, bool f64) {
    Frame f = ref_call({{"op", "run"}, {"sets", in.sets}, {"f64", f64}}, in.arrays);
    try {
      return split_sets(f, in.count(), "the reference worker");
    } catch (const Error& e) {
      throw RefError(e.what());
    }
  }

  void parity() {
    Inputs in = make(plan_.parity_sets);
    for (const auto& a : in.arrays)
      m_.input_shapes.push_back(a.shape);
    Sha256 digest;
    for (std::size_t i = 0; i < in.sets[0].get<std::size_t>(); ++i)
      digest.update(in.arrays[i].bytes);
    m_.inputs_sha256 = to_hex(digest.finish());
    const auto naive = ref_run(in, false);
    const auto oracle = ref_run(in, true);
    Frame f;
    double s = 0;
    if (!cand_call({{"op", "run"}, {"sets", in.sets}}, in.arrays, f, s)) return;
    std::vector<std::vector<WireArray>> got;
    try {
      got = split_sets(f, in.count(), "the candidate worker");
    } catch (const Error& e) {
      fail(e.what());
      return;
    }
    json per = json::array();
    bool ok = true;
    double worst = 0, floor_all = 0, gate_all = 0, rel = 0, finite = 1;
    for (std::size_t i = 0; i < got.size(); ++i) {
      OutputStats floor = output_distance(naive[i], oracle[i]);
      if (!floor.ok) throw RefError("the reference's outputs: " + floor.problem);
      const double gate =
          plan_.multiplier * std::max(floor.max_abs, 1e-6 * std::max(floor.scale, 1e-30));
      OutputStats c = compare_outputs(got[i], oracle[i], gate);
      per.push_back({{"max_abs", c.max_abs},
                     {"max_rel", c.max_rel},
                     {"floor_max_abs", floor.max_abs},
                     {"gate_abs", gate},
                     {"finite_fraction", c.finite_fraction},
                     {"ok", c.ok}});
      if (!c.ok) {
        ok = false;
        per.back()["problem"] = c.problem;
      }
      worst = std::max(worst, c.max_abs);
      rel = std::max(rel, c.max_rel);
      finite = std::min(finite, c.finite_fraction);
      floor_all = std::max(floor_all, floor.max_abs);
      gate_all = std::max(gate_all, gate);
    }
    // Timed rounds compare with the reference's own float32 answer: within the gate plus the
    // reference's distance from the oracle, with room for other inputs' floors.
    tolerance_ = 2.0 * (gate_all + floor_all);
    m_.parity = {{"oracle", "fp64"},
                 {"sets", per},
                 {"max_abs", worst},
                 {"max_rel", rel},
                 {"floor_max_abs", floor_all},
                 {"gate_abs", gate_all},
                 {"finite_fraction", finite},
                 {"fresh_inputs", true},
                 {"verdict", ok ? "PASS" : "FAIL"}};
    m_.parity_verdict = ok ? "PASS" : "FAIL";
  }

  // One timed batch of the candidate; its answers split into sets (empty on a failure).
  std::vector<std::vector<WireArray>> timed_candidate(const Inputs& in, double& seconds) {
    Frame f;
    if (!cand_call({{"op", "run"}, {"sets", in.sets}}, in.arrays, f, seconds)) return {};
    try {
      return split_sets(f, in.count(), "the candidate worker");
    } catch (const Error& e) {
      fail(e.what());
      return {};
    }
  }

  // Every answer of a timed batch against the reference's answers of the same inputs.
  bool check_round(const std::vector<std::vector<WireArray>>& got,
                   const std::vector<std::vector<WireArray>>& want, int round) {
    if (got.empty()) return false;
    for (std::size_t i = 0; i < got.size(); ++i) {
      OutputStats c = compare_outputs(got[i], want[i], tolerance_);
      if (!c.ok) {
        fail((round < 0 ? std::string("warm-up") : "timed round " + std::to_string(round)) +
             ", call " + std::to_string(i) + ": " + c.problem +
             " (fresh inputs every call: a candidate must compute each one)");
        return false;
      }
    }
    return true;
  }

  void timing() {
    // Size a batch from one untimed warm-up of each.
    Inputs warm = make(1);
    ref_run(warm, false);
    double one = last_seconds_;
    auto want = ref_run(warm, false);
    one = std::min(one, last_seconds_);
    double s = 0;
    if (!check_round(timed_candidate(warm, s), want, -1)) return;
    const int k = std::clamp(int(std::ceil(plan_.round_target_s / std::max(one, 1e-6))), 1,
                             plan_.max_calls_per_round);
    const int rounds = plan_.rounds > 0 ? plan_.rounds : (plan_.mode == "screen" ? 8 : 20);
    m_.calls_per_round = k;
    double idle_cpu_worst = 0, cand_cpu = 0;
    const double ticks_before = box_cpu_seconds_with_exited(cand_.box_pid());
    for (int r = 0; r < rounds; ++r) {
      Inputs in = make(k);
      const bool cand_first = r % 2 == 0;
      double ref_s = 0, cand_s = 0;
      std::vector<std::vector<WireArray>> got;
      if (cand_first) got = timed_candidate(in, cand_s);
      if (cand_first && got.empty()) return;
      const double before = box_cpu_seconds(cand_.box_pid());
      want = ref_run(in, false);
      ref_s = last_seconds_;
      const double idle = box_cpu_seconds(cand_.box_pid()) - before;
      idle_cpu_worst = std::max(idle_cpu_worst, idle);
      if (idle > std::max(0.02, plan_.idle_cpu_fraction * ref_s))
        m_.anomalies.push_back("the candidate's box used " + fmt(idle * 1e3) +
                               " ms of CPU while the reference's batch of " + fmt(ref_s * 1e3) +
                               " ms was timed (round " + std::to_string(r) + ")");
      if (!cand_first) got = timed_candidate(in, cand_s);
      if (!check_round(got, want, r)) return;
      m_.reference_ms.push_back(ref_s * 1e3 / k);
      m_.candidate_ms.push_back(cand_s * 1e3 / k);
      cand_cpu += cand_s;
      m_.orders.push_back(cand_first ? "candidate_first" : "baseline_first");
    }
    m_.rounds = rounds;
    // Work hidden in threads or processes that ended before the parent looked escapes the
    // per-thread accounting but not the per-process one.
    const double ticks = box_cpu_seconds_with_exited(cand_.box_pid()) - ticks_before;
    if (plan_.clock == "cpu" && ticks > 1.5 * (cand_cpu + idle_cpu_worst * rounds) + 0.1)
      m_.anomalies.push_back("the candidate's box used " + fmt(ticks * 1e3) +
                             " ms of CPU in the timed rounds, its measured calls " +
                             fmt(cand_cpu * 1e3) + " ms: work in threads or processes that ended");
    summarize(idle_cpu_worst);
  }

  void summarize(double idle_cpu_worst) {
    json per_order = json::object();
    for (const char* order : {"candidate_first", "baseline_first"}) {
      std::vector<double> b, c;
      for (std::size_t i = 0; i < m_.orders.size(); ++i)
        if (m_.orders[i] == order) {
          b.push_back(m_.reference_ms[i]);
          c.push_back(m_.candidate_ms[i]);
        }
      const double bp = median(b), cp = median(c);
      per_order[order] = {{"baseline_p50_ms", bp},
                          {"candidate_p50_ms", cp},
                          {"speedup", cp > 0 ? bp / cp : 0.0},
                          {"n", b.size()}};
    }
    m_.p50_reference_ms = median(m_.reference_ms);
    m_.p50_candidate_ms = median(m_.candidate_ms);
    m_.speedup = m_.p50_reference_ms / m_.p50_candidate_ms;
    // The spread, conservative both ways: the reference's quick quarter against the candidate's
    // slow quarter, and the reverse. Two workers running the same code give a low end at or
    // below 1 whatever the host's noise; a few disturbed rounds move neither end.
    m_.speedup_low = quantile(m_.reference_ms, 0.25) / quantile(m_.candidate_ms, 0.75);
    m_.speedup_high = quantile(m_.reference_ms, 0.75) / quantile(m_.candidate_ms, 0.25);
    // Which worker goes first must not matter beyond 15%, nor beyond the rounds' own spread:
    // on a busy host the spread says how far two halves of the same rounds may differ.
    const double sa = per_order["candidate_first"]["speedup"].get<double>();
    const double sb = per_order["baseline_first"]["speedup"].get<double>();
    const double spread = m_.speedup > 0 ? (m_.speedup_high - m_.speedup_low) / m_.speedup : 0;
    if (std::fabs(sa - sb) / std::max(sa, sb) > std::max(0.15, spread))
      m_.anomalies.push_back("ordering-dependent speedup: " + fmt(sa) + " vs " + fmt(sb) +
                             " (the rounds' spread is " + fmt(spread) + ")");
    m_.timing = per_order;
    m_.timing["per_round"] = {
        {"baseline_ms", m_.reference_ms}, {"candidate_ms", m_.candidate_ms}, {"order", m_.orders}};
    m_.timing["calls_per_round"] = m_.calls_per_round;
    m_.timing["spread"] = {{"speedup_low", m_.speedup_low}, {"speedup_high", m_.speedup_high}};
    m_.timing["candidate_idle_cpu_ms_max"] = idle_cpu_worst * 1e3;
    m_.timing["clock"] = plan_.clock == "cpu"
                             ? "parent: CPU time of the worker's box from inputs written to "
                               "answers read, inputs fresh each call"
                             : "parent: wall time from inputs written to answers read, inputs "
                               "fresh each call";
  }

  Worker& maker_;
  Worker& ref_;
  Worker& cand_;
  const ParentPlan& plan_;
  const std::string secret_;
  long long next_seed_ = 0;
  double last_seconds_ = 0;
  double tolerance_ = 0;
  ParentMeasurement m_;
};

}  // namespace

double quantile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = p * double(v.size() - 1);
  const std::size_t lo = std::size_t(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - double(lo));
}

ParentMeasurement measure_with_workers(Worker& maker, Worker& reference, Worker& candidate,
                                       const ParentPlan& plan) {
  return Protocol(maker, reference, candidate, plan).run();
}

}  // namespace kd::verify
