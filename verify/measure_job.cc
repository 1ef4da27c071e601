#include "verify/measure_job.h"

#include <chrono>
#include <exception>
#include <future>
#include <memory>

#include "common/errors.h"
#include "common/files.h"
#include "common/json_read.h"
#include "sandbox/box_spec_json.h"
#include "sandbox/box_user.h"

namespace kd::verify {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

json worker_json(const WorkerSpec& w) {
  json j = {{"name", w.name},
            {"box", sandbox::box_spec_json(w.box)},
            {"pipe_dir", w.pipe_dir},
            {"argv", w.argv},
            {"cwd", w.cwd},
            {"env", w.env},
            {"timeout_s", w.timeout_s}};
  if (!w.companion.empty()) j["companion"] = w.companion;
  return j;
}

WorkerSpec worker_from(const JsonObjectReader& r) {
  r.allow_only({"name", "box", "pipe_dir", "argv", "cwd", "env", "timeout_s", "companion"});
  WorkerSpec w;
  w.name = r.string("name");
  w.box = sandbox::box_spec_from_json(r.at("box"), r.where() + ": box");
  w.pipe_dir = r.absolute_path("pipe_dir");
  w.argv = r.strings("argv");
  w.cwd = r.string("cwd");
  w.env = r.string_map("env");
  w.timeout_s = r.number("timeout_s", 0, 1e9);
  w.companion = r.string_or("companion", "");
  return w;
}

json plan_json(const ParentPlan& p) {
  return {{"mode", p.mode},
          {"reference_module", p.reference_module},
          {"candidate_module", p.candidate_module},
          {"reference_roots", p.reference_roots},
          {"candidate_roots", p.candidate_roots},
          {"candidate_entries", p.candidate_entries},
          {"multiplier", p.multiplier},
          {"parity_sets", p.parity_sets},
          {"rounds", p.rounds},
          {"round_target_s", p.round_target_s},
          {"max_calls_per_round", p.max_calls_per_round},
          {"call_timeout_s", p.call_timeout_s},
          {"idle_cpu_fraction", p.idle_cpu_fraction}};
}

ParentPlan plan_from(const JsonObjectReader& r) {
  r.allow_only({"mode", "reference_module", "candidate_module", "reference_roots",
                "candidate_roots", "candidate_entries", "multiplier", "parity_sets", "rounds",
                "round_target_s", "max_calls_per_round", "call_timeout_s", "idle_cpu_fraction"});
  ParentPlan p;
  p.mode = r.choice("mode", {"screen", "full"});
  p.reference_module = r.string("reference_module");
  p.candidate_module = r.string("candidate_module");
  p.reference_roots = r.strings("reference_roots");
  p.candidate_roots = r.strings("candidate_roots");
  p.candidate_entries = r.strings("candidate_entries");
  p.multiplier = r.number("multiplier", 0, 1e6);
  p.parity_sets = static_cast<int>(r.count("parity_sets", 1000));
  p.rounds = static_cast<int>(r.count("rounds", 100000));
  p.round_target_s = r.number("round_target_s", 0, 1e6);
  p.max_calls_per_round = static_cast<int>(r.count("max_calls_per_round", 1000000));
  p.call_timeout_s = r.number("call_timeout_s", 0, 1e9);
  p.idle_cpu_fraction = r.number("idle_cpu_fraction", 0, 1e6);
  return p;
}

template <typename T>
T member(const json& j, const char* key, const std::string& where) {
  if (!j.contains(key)) throw Error(where + ": missing field " + quote(key));
  try {
    return j.at(key).get<T>();
  } catch (const json::exception& e) {
    throw Error(where + ": " + quote(key) + ": " + e.what());
  }
}

// Two workers: the reference's, whose box also serves the inputs worker, then the candidate's.
void check_workers(const MeasureJob& job) {
  if (job.workers.size() != 2)
    throw Error("a measure job has two workers (reference, candidate), not " +
                std::to_string(job.workers.size()));
  if (job.workers[0].companion.empty())
    throw Error("the first worker (the reference's) must serve the inputs worker as its companion");
  if (!job.workers[1].companion.empty()) throw Error("the candidate's worker serves no companion");
}

}  // namespace

ParentMeasurement run_measure_job(const MeasureJob& job, const contract::Chip& chip) {
  check_workers(job);
  const auto t0 = std::chrono::steady_clock::now();
  // The two boxes are built at once; a box that cannot be built throws here, as it would alone.
  std::vector<std::future<std::unique_ptr<Worker>>> starting;
  for (WorkerSpec w : job.workers) {
    // Scratch is made again where the work runs: a node's earlier attempt leaves nothing behind.
    fs::remove_all(w.box.worktree);
    fs::remove_all(w.pipe_dir);
    fs::create_directories(w.box.worktree);
    sandbox::hand_to_box_user(w.box.worktree);
    w.box.chip = chip;
    starting.push_back(std::async(std::launch::async, Worker::start, std::move(w)));
  }
  std::vector<std::unique_ptr<Worker>> started;
  std::exception_ptr failed;
  for (auto& f : starting) {
    try {
      started.push_back(f.get());
    } catch (...) {
      if (!failed) failed = std::current_exception();
    }
  }
  if (failed) std::rethrow_exception(failed);
  ParentPlan plan = job.plan;
  plan.clock = chip.kind == "cpu" ? "cpu" : "wall";
  ParentMeasurement m =
      measure_with_workers(started[0]->companion(), *started[0], *started[1], plan);
  for (auto& w : started)
    w->ask_to_quit();
  std::string log;
  for (auto& w : started) {
    sandbox::RunResult r = w->finish();
    log += "== " + w->name() + " worker\n" + r.out + r.err + "\n" + r.to_json().dump(2) + "\n";
  }
  write_file_atomic(job.log, log);
  m.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return m;
}

json measure_job_json(const MeasureJob& job) {
  json workers = json::array();
  for (const auto& w : job.workers)
    workers.push_back(worker_json(w));
  return {{"workers", workers}, {"plan", plan_json(job.plan)}, {"log", job.log}};
}

MeasureJob measure_job_from_json(const json& j, const std::string& where) {
  JsonObjectReader r(j, where);
  r.allow_only({"workers", "plan", "log"});
  MeasureJob job;
  for (const JsonObjectReader& w : r.objects("workers"))
    job.workers.push_back(worker_from(w));
  try {
    check_workers(job);
  } catch (const Error& e) {
    r.field_error("workers", e.what());
  }
  job.plan = plan_from(r.object("plan"));
  job.log = r.absolute_path("log");
  return job;
}

json parent_measurement_json(const ParentMeasurement& m) {
  return {{"reference_error", m.reference_error},
          {"parity_verdict", m.parity_verdict},
          {"parity", m.parity},
          {"candidate_entry", m.candidate_entry},
          {"input_shapes", m.input_shapes},
          {"inputs_sha256", m.inputs_sha256},
          {"calls_per_round", m.calls_per_round},
          {"rounds", m.rounds},
          {"reference_ms", m.reference_ms},
          {"candidate_ms", m.candidate_ms},
          {"orders", m.orders},
          {"timing", m.timing},
          {"p50_reference_ms", m.p50_reference_ms},
          {"p50_candidate_ms", m.p50_candidate_ms},
          {"speedup", m.speedup},
          {"speedup_low", m.speedup_low},
          {"speedup_high", m.speedup_high},
          {"anomalies", m.anomalies},
          {"seed_commitment", m.seed_commitment},
          {"wall_s", m.wall_s}};
}

ParentMeasurement parent_measurement_from_json(const json& j, const std::string& where) {
  if (!j.is_object()) throw Error(where + ": must be an object");
  ParentMeasurement m;
  m.reference_error = member<std::string>(j, "reference_error", where);
  m.parity_verdict = member<std::string>(j, "parity_verdict", where);
  m.parity = member<json>(j, "parity", where);
  m.candidate_entry = member<std::string>(j, "candidate_entry", where);
  m.input_shapes = member<json>(j, "input_shapes", where);
  m.inputs_sha256 = member<std::string>(j, "inputs_sha256", where);
  m.calls_per_round = member<int>(j, "calls_per_round", where);
  m.rounds = member<int>(j, "rounds", where);
  m.reference_ms = member<std::vector<double>>(j, "reference_ms", where);
  m.candidate_ms = member<std::vector<double>>(j, "candidate_ms", where);
  m.orders = member<std::vector<std::string>>(j, "orders", where);
  m.timing = member<json>(j, "timing", where);
  m.p50_reference_ms = member<double>(j, "p50_reference_ms", where);
  m.p50_candidate_ms = member<double>(j, "p50_candidate_ms", where);
  m.speedup = member<double>(j, "speedup", where);
  m.speedup_low = member<double>(j, "speedup_low", where);
  m.speedup_high = member<double>(j, "speedup_high", where);
  m.anomalies = member<std::vector<std::string>>(j, "anomalies", where);
  m.seed_commitment = member<std::string>(j, "seed_commitment", where);
  // Optional: a node of an older kdispatch wrote none.
  if (j.contains("wall_s")) m.wall_s = member<double>(j, "wall_s", where);
  return m;
}

}  // namespace kd::verify
