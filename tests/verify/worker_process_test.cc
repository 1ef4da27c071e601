// The measuring parent's workers (verify/worker_process.h) with the real worker program in real
// boxes: the inputs worker served from the reference's box, and the CPU clock that leaves it out.
#include "verify/worker_process.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "common/errors.h"
#include "common/files.h"
#include "sandbox/box_user.h"
#include "sandbox/profile.h"
#include "tests/support/process.h"

namespace kd::verify {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// A module whose inputs cost CPU (a busy loop of `burn` seconds) and whose workload costs none
// (it sleeps `nap` seconds): one process's CPU cannot pass for the other's. Seed 99 ends the
// process that makes it.
const char* kModule = R"(import os
import time
import numpy as np

def create_inputs(seed=0):
    if seed == 99:
        os._exit(3)
    end = time.process_time() + BURN
    while time.process_time() < end:
        pass
    return (np.full(4, float(seed), dtype=np.float32),)

def workload(x):
    time.sleep(NAP)
    return x * 2
)";

struct Boxed {
  test::TempDir dir{test::outside_box_tmpfs()};
  fs::path module = fs::path(dir.path()) / "mod/problem.py";

  Boxed(double burn, double nap) {
    std::string text = kModule;
    text.replace(text.find("BURN"), 4, std::to_string(burn));
    text.replace(text.find("NAP"), 3, std::to_string(nap));
    fs::create_directories(module.parent_path());
    write_file_atomic(module, text);
    fs::permissions(dir.path(),
                    fs::perms::owner_all | fs::perms::others_read | fs::perms::others_exec);
  }

  WorkerSpec spec(const std::string& name, const std::string& companion = "") const {
    const fs::path program = fs::path(KD_SOURCE_DIR) / "workers/kd-pyworker";
    WorkerSpec w;
    w.name = name;
    w.companion = companion;
    w.pipe_dir = fs::path(dir.path()) / ("pipes-" + name);
    w.box.profile = sandbox::load_profile("verifier");
    w.box.worktree = fs::path(dir.path()) / (name + "-work");
    fs::create_directories(w.box.worktree);
    sandbox::hand_to_box_user(w.box.worktree);
    w.box.ro = {module.parent_path(), program.parent_path()};
    w.argv = {"python3", "-I", program.string()};
    w.cwd = module.parent_path().string();
    w.env = measured_worker_env();
    w.timeout_s = 120;
    return w;
  }

  json load() const { return {{"op", "load"}, {"path", module.string()}}; }
};

TimedFrame call(Worker& w, const json& header, const std::vector<WireArray>& arrays = {}) {
  w.send(header, arrays, 60);
  TimedFrame out;
  w.receive(out);
  EXPECT_TRUE(out.frame.header.value("ok", false)) << w.name() << ": " << out.frame.header;
  return out;
}

TEST(WorkerProcess, TheCompanionSharesTheHostsBoxButNotItsCpuClock) {
  const double burn = 0.4, nap = 0.6;
  Boxed b(burn, nap);
  auto ref = Worker::start(b.spec("reference", "inputs"));
  Worker& maker = ref->companion();
  EXPECT_EQ(maker.name(), "inputs");
  EXPECT_EQ(maker.box_pid(), ref->box_pid());
  // Two processes of one interpreter start: each loads the module and names itself.
  const TimedFrame maker_loaded = call(maker, b.load());
  const TimedFrame ref_loaded = call(*ref, b.load());
  EXPECT_NE(maker_loaded.frame.header.value("pid", 0), ref_loaded.frame.header.value("pid", 0));

  // The inputs are made (CPU) while the reference runs (asleep): the reference's clock, on the
  // same box, must not count the inputs worker's busy loop.
  WireArray x{"<f4", {4}, std::string(16, '\0')};
  maker.send({{"op", "make"}, {"seeds", {3}}}, {}, 60);
  ref->send({{"op", "run"}, {"sets", {1}}}, {x}, 60);
  TimedFrame made, ran;
  maker.receive(made);
  ref->receive(ran);
  ASSERT_TRUE(made.frame.header.value("ok", false)) << made.frame.header;
  ASSERT_TRUE(ran.frame.header.value("ok", false)) << ran.frame.header;
  ASSERT_EQ(made.frame.arrays.size(), 1u);
  EXPECT_EQ(made.frame.arrays[0].dtype, "<f4");
  EXPECT_GE(ran.seconds, nap);
  EXPECT_LT(ran.cpu_seconds, burn / 4) << "the inputs worker's CPU was counted as the reference's";

  // The host's own work is still its own.
  const TimedFrame own = call(*ref, {{"op", "make"}, {"seeds", {4}}});
  EXPECT_GE(own.cpu_seconds, burn * 0.9);

  ref->ask_to_quit();
  const sandbox::RunResult r = ref->finish();
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

TEST(WorkerProcess, ACompanionThatEndsIsNoticedWhileItsBoxRuns) {
  Boxed b(0, 0);
  auto ref = Worker::start(b.spec("reference", "inputs"));
  Worker& maker = ref->companion();
  call(maker, b.load());
  call(*ref, b.load());
  maker.send({{"op", "make"}, {"seeds", {99}}}, {}, 60);
  TimedFrame out;
  const auto start = std::chrono::steady_clock::now();
  try {
    maker.receive(out);
    ADD_FAILURE() << "an answer from an ended process: " << out.frame.header;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("ended before answering"), std::string::npos) << e.what();
  }
  // Noticed from its own process, not at the call's deadline (the box still runs the reference).
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  call(*ref, {{"op", "make"}, {"seeds", {1}}});
  ref->finish();
}

TEST(WorkerProcess, AWorkerWithoutACompanionSaysSo) {
  Boxed b(0, 0);
  auto w = Worker::start(b.spec("candidate"));
  EXPECT_THROW(w->companion(), Error);
  call(*w, b.load());
  w->finish();
}

}  // namespace
}  // namespace kd::verify
