#include "verify/measuring_parent.h"

#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <span>
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

// A worker's answer, one view of its arrays per input set.
using Sets = std::vector<std::span<const WireArray>>;

// Splits a worker's flat answer into sets as its header's "sets" counts say; the views point
// into `f`.
Sets split_sets(const Frame& f, std::size_t expect_sets, const std::string& who) {
  const json sets = f.header.value("sets", json());
  if (!sets.is_array() || sets.size() != expect_sets)
    throw Error(who + " answered " + (sets.is_array() ? std::to_string(sets.size()) : "no") +
                " output sets for " + std::to_string(expect_sets) + " input sets");
  Sets out;
  std::size_t at = 0;
  for (const auto& n : sets) {
    if (!n.is_number_unsigned() || at + n.get<std::size_t>() > f.arrays.size())
      throw Error(who + " answered set sizes that do not add up to its arrays");
    out.emplace_back(f.arrays.data() + at, n.get<std::size_t>());
    at += n.get<std::size_t>();
  }
  if (at != f.arrays.size()) throw Error(who + " answered arrays beyond its sets");
  return out;
}

// Input sets as the inputs worker made them: its answer, whose buffers the next make reuses.
struct Inputs {
  TimedFrame made;
  // Arrays per set, as the answer's header says (take_inputs checked it).
  const json& sets() const { return made.frame.header.at("sets"); }
  const std::vector<WireArray>& arrays() const { return made.frame.arrays; }
  std::size_t count() const { return sets().size(); }
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

  // A request to a worker of the trusted side (`w`: the reference or the inputs worker).
  void trusted_send(Worker& w, const json& h, const std::vector<WireArray>& a = {}) {
    try {
      w.send(h, a, plan_.call_timeout_s);
    } catch (const Error& e) {
      throw RefError("the " + w.name() + " worker: " + e.what());
    }
  }
  // Its answer, into `out`.
  void trusted_receive(Worker& w, const std::string& op, TimedFrame& out) {
    try {
      w.receive(out);
    } catch (const Error& e) {
      throw RefError("the " + w.name() + " worker: " + e.what());
    }
    if (!out.frame.header.value("ok", false))
      throw RefError("the " + w.name() + " worker failed at " + op + ": " +
                     out.frame.header.value("error", std::string("(no error text)")));
    last_seconds_ = clock_of(out);
  }

  // A candidate failure ends the measurement with parity FAIL and the reason.
  bool cand_receive(const std::string& op, TimedFrame& out, double& seconds) {
    try {
      cand_.receive(out);
    } catch (const Error& e) {
      fail(std::string("the candidate worker: ") + e.what());
      return false;
    }
    if (!out.frame.header.value("ok", false)) {
      fail("the candidate failed at " + op + ": " +
           out.frame.header.value("error", std::string("(no error text)")));
      return false;
    }
    seconds = clock_of(out);
    return true;
  }
  bool cand_send(const json& h, const std::vector<WireArray>& a) {
    try {
      cand_.send(h, a, plan_.call_timeout_s);
      return true;
    } catch (const Error& e) {
      fail(std::string("the candidate worker: ") + e.what());
      return false;
    }
  }
  bool cand_call(const json& h, const std::vector<WireArray>& a, TimedFrame& out, double& seconds) {
    return cand_send(h, a) && cand_receive(h.value("op", std::string()), out, seconds);
  }

  void fail(const std::string& why) {
    m_.parity_verdict = "FAIL";
    m_.parity["verdict"] = "FAIL";
    m_.parity["error"] = why;
  }

  // All three load at once; the inputs worker, once loaded, makes the parity inputs while the
  // others finish loading.
  void load() {
    const json ref_load = {{"op", "load"},
                           {"path", plan_.reference_module},
                           {"roots", plan_.reference_roots},
                           {"entries", {"workload"}}};
    const json cand_load = {{"op", "load"},
                            {"path", plan_.candidate_module},
                            {"roots", plan_.candidate_roots},
                            {"entries", plan_.candidate_entries}};
    trusted_send(maker_, ref_load);
    trusted_send(ref_, ref_load);
    const bool cand_sent = cand_send(cand_load, {});
    TimedFrame answer;
    trusted_receive(maker_, "load", answer);
    request_inputs(plan_.parity_sets);
    trusted_receive(ref_, "load", answer);
    double s = 0;
    if (cand_sent && cand_receive("load", answer, s))
      m_.candidate_entry = answer.frame.header.value("entry", std::string());
  }

  // Asks the inputs worker for `n` fresh input sets; take_inputs() collects them, so they can be
  // made while the parent does other work.
  void request_inputs(int n) {
    json seeds = json::array();
    for (int i = 0; i < n; ++i)
      seeds.push_back(seed_for(secret_, next_seed_++));
    // Another process makes the inputs: the reference's own process stays as idle between its
    // timed batches as the candidate's, so neither is favoured by the host's scheduler.
    trusted_send(maker_, {{"op", "make"}, {"seeds", seeds}});
    requested_sets_ = std::size_t(n);
  }

  // The input sets last requested, in in_ (whose buffers the next ones reuse).
  const Inputs& take_inputs() {
    trusted_receive(maker_, "make", in_.made);
    const json& header = in_.made.frame.header;
    std::size_t total = 0;
    if (!header.contains("sets") || !header["sets"].is_array() ||
        header["sets"].size() != requested_sets_)
      throw RefError("the inputs worker made no input sets");
    for (const auto& k : header["sets"]) {
      if (!k.is_number_unsigned()) throw RefError("the inputs worker made no input sets");
      total += k.get<std::size_t>();
    }
    if (total != in_.arrays().size())
      throw RefError("the inputs worker's input sets do not add up");
    return in_;
  }

  // Runs `in` on a worker of the trusted side (float64 when `f64`: the oracle); trusted_sets()
  // reads the answer into `out`.
  void trusted_run(Worker& w, const Inputs& in, bool f64) {
    trusted_send(w, {{"op", "run"}, {"sets", in.sets()}, {"f64", f64}}, in.arrays());
  }
  Sets trusted_sets(Worker& w, const Inputs& in, TimedFrame& out) {
    trusted_receive(w, "run", out);
    try {
      return split_sets(out.frame, in.count(), "the " + w.name() + " worker");
    } catch (const Error& e) {
      throw RefError(e.what());
    }
  }
  // The reference's float32 answers to `in`, timed.
  Sets ref_run(const Inputs& in, TimedFrame& out) {
    trusted_run(ref_, in, false);
    return trusted_sets(ref_, in, out);
  }

  void parity() {
    const Inputs& in = take_inputs();  // requested in load()
    for (const auto& a : in.arrays())
      m_.input_shapes.push_back(a.shape);
    Sha256 digest;
    for (std::size_t i = 0; i < in.sets()[0].get<std::size_t>(); ++i)
      digest.update(in.arrays()[i].bytes);
    m_.inputs_sha256 = to_hex(digest.finish());
    // Nothing here is timed, so all three work at once: the oracle from the inputs worker (the
    // reference's module too), the reference's own float32 answers and the candidate's.
    TimedFrame naive_answer, oracle_answer, cand_answer;
    trusted_run(maker_, in, true);
    trusted_run(ref_, in, false);
    double s = 0;
    const bool answered =
        cand_call({{"op", "run"}, {"sets", in.sets()}}, in.arrays(), cand_answer, s);
    const Sets oracle = trusted_sets(maker_, in, oracle_answer);
    const Sets naive = trusted_sets(ref_, in, naive_answer);
    if (!answered) return;
    Sets got;
    try {
      got = split_sets(cand_answer.frame, in.count(), "the candidate worker");
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
  Sets timed_candidate(const Inputs& in, double& seconds) {
    if (!cand_call({{"op", "run"}, {"sets", in.sets()}}, in.arrays(), cand_answer_, seconds))
      return {};
    try {
      return split_sets(cand_answer_.frame, in.count(), "the candidate worker");
    } catch (const Error& e) {
      fail(e.what());
      return {};
    }
  }

  // Every answer of a timed batch against the reference's answers of the same inputs.
  bool check_round(const Sets& got, const Sets& want, int round) {
    if (got.empty()) return false;
    for (std::size_t i = 0; i < got.size(); ++i) {
      if (agrees_within(got[i], want[i], tolerance_)) continue;
      OutputStats c = compare_outputs(got[i], want[i], tolerance_);
      if (!c.ok) {
        fail("timed round " + std::to_string(round) + ", call " + std::to_string(i) + ": " +
             c.problem + " (fresh inputs every call: a candidate must compute each one)");
        return false;
      }
    }
    return true;
  }

  void timing() {
    // Size a batch from the reference's quicker of two runs of the parity inputs, which both
    // workers have answered already (their buffers are warm).
    ref_run(in_, ref_answer_);
    double one = last_seconds_;
    ref_run(in_, ref_answer_);
    one = std::min(one, last_seconds_) / double(std::max<std::size_t>(in_.count(), 1));
    const int k = std::clamp(int(std::ceil(plan_.round_target_s / std::max(one, 1e-6))), 1,
                             plan_.max_calls_per_round);
    const int rounds = plan_.rounds > 0 ? plan_.rounds : (plan_.mode == "screen" ? 8 : 20);
    m_.calls_per_round = k;
    double idle_cpu_worst = 0, cand_cpu = 0;
    const double ticks_before = box_cpu_seconds_with_exited(cand_.box_pid());
    request_inputs(k);
    for (int r = 0; r < rounds; ++r) {
      const Inputs& in = take_inputs();
      // The next round's inputs are made while this round is timed, by the inputs worker (whose
      // CPU the reference's clock leaves out): as fresh, and off the parent's critical path.
      if (r + 1 < rounds) request_inputs(k);
      const bool cand_first = r % 2 == 0;
      double ref_s = 0, cand_s = 0;
      Sets got;
      if (cand_first) got = timed_candidate(in, cand_s);
      if (cand_first && got.empty()) return;
      const double before = box_cpu_seconds(cand_.box_pid());
      const Sets want = ref_run(in, ref_answer_);
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
  std::size_t requested_sets_ = 0;
  Inputs in_;
  // The timed rounds' answers: the same buffers round after round.
  TimedFrame ref_answer_, cand_answer_;
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
