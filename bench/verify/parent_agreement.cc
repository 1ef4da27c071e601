// The agreement benchmark's parent side: the measuring parent on two modules of known speedup
// ratio, each in its own box as a verification runs them. Prints one JSON line with the
// parent-timed speedup by both clocks. Usage: bench_verify_parent REFERENCE.py CANDIDATE.py WORKER
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "sandbox/box_user.h"
#include "sandbox/profile.h"
#include "verify/measuring_parent.h"
#include "verify/worker_process.h"

namespace fs = std::filesystem;
using namespace kd;

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s REFERENCE.py CANDIDATE.py WORKER\n", argv[0]);
    return 64;
  }
  const fs::path ref = fs::canonical(argv[1]), cand = fs::canonical(argv[2]);
  const fs::path worker = fs::canonical(argv[3]);
  char tmpl[] = "/var/tmp/kd-agreement.XXXXXX";
  const fs::path root = ::mkdtemp(tmpl);
  fs::permissions(root, fs::perms::owner_all | fs::perms::others_read | fs::perms::others_exec);
  nlohmann::json out;
  for (const char* clock : {"cpu", "wall"}) {
    auto spec = [&](const std::string& name, const fs::path& dir) {
      verify::WorkerSpec w;
      w.name = name;
      const fs::path work = root / clock / (name + "-work");
      fs::create_directories(work);
      sandbox::hand_to_box_user(work);
      w.pipe_dir = root / clock / ("pipes-" + name);
      w.box.profile = sandbox::load_profile("verifier");
      w.box.worktree = work;
      w.box.ro = {dir, worker.parent_path()};
      w.argv = {"python3", "-I", worker.string()};
      w.cwd = dir.string();
      w.env = verify::measured_worker_env();
      return w;
    };
    verify::WorkerSpec ref_spec = spec("reference", ref.parent_path());
    ref_spec.companion = "inputs";
    auto r = verify::Worker::start(std::move(ref_spec));
    auto c = verify::Worker::start(spec("candidate", cand.parent_path()));
    verify::ParentPlan plan;
    plan.reference_module = ref.string();
    plan.candidate_module = cand.string();
    plan.clock = clock;
    verify::ParentMeasurement m = verify::measure_with_workers(r->companion(), *r, *c, plan);
    out[clock] = {{"speedup", m.speedup},
                  {"low", m.speedup_low},
                  {"high", m.speedup_high},
                  {"p50_ms", {{"baseline", m.p50_reference_ms}, {"candidate", m.p50_candidate_ms}}},
                  {"parity", m.parity_verdict},
                  {"anomalies", m.anomalies}};
  }
  fs::remove_all(root);
  std::printf("%s\n", out.dump().c_str());
  return 0;
}
