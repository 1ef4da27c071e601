// One worker of the measuring parent: a worker program in its own box, reached through two named
// pipes and a data file in a directory only that box binds (verify/worker_wire.h). The parent times
// each call from outside (from the first byte of the request to the last byte of the answer); the
// box's own result (exit, output, denials) is kept for the log.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "common/fd.h"
#include "sandbox/box.h"
#include "verify/worker_wire.h"

namespace kd::verify {

struct WorkerSpec {
  std::string name;                // "reference" | "candidate": names it in errors
  sandbox::BoxSpec box;            // its chip already set; the pipe directory is added
  std::filesystem::path pipe_dir;  // made here (must not exist), bound read-write
  std::vector<std::string> argv;   // the worker program; the pipes and the data file are appended
  std::string cwd;                 // inside the box
  std::map<std::string, std::string> env;  // added to the profile's environment
  double timeout_s = 600;                  // the whole life of the worker
  // Non-empty: the program also serves a second worker of this name, from a fork of itself made
  // before any module is loaded, in the same box (its pipes in pipe_dir/companion). The box then
  // starts one interpreter for two workers; the companion's CPU time is not this worker's.
  std::string companion;
};

struct TimedFrame {
  Frame frame;
  double seconds = 0;      // the parent's wall clock: inputs written to answers read
  double cpu_seconds = 0;  // CPU time the worker's box used meanwhile (box_cpu_seconds)
};

// The environment every measured worker gets, the same for the reference's and the candidate's:
// one thread for the math libraries (on a shared host their spinning helpers would measure the
// neighbours, not the kernel), and an allocator that keeps freed memory instead of returning it
// to the kernel (glibc otherwise maps and trims large buffers call after call, and the page
// faults of each fresh megabyte, expensive and erratic on a busy or virtual host, would be timed
// as the module's).
const std::map<std::string, std::string>& measured_worker_env();

// CPU time used so far by every live thread of `pid` and the processes below it, from the
// kernel's per-thread run-time accounting (nanoseconds), which no process can edit; `skip` and
// the processes below it are not counted.
double box_cpu_seconds(pid_t pid, pid_t skip = 0);
// The same tree by the coarser per-process accounting (clock ticks), which also counts threads
// and children that have exited.
double box_cpu_seconds_with_exited(pid_t pid);

class Worker {
 public:
  // Opens the box and starts the worker program; throws kd::Error naming the layer or the pipe.
  static std::unique_ptr<Worker> start(WorkerSpec spec);
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;
  ~Worker();

  // Sends a request: its arrays into the data file, then the header. The call's clock starts
  // before the arrays are written. One request at a time; throws kd::Error (a pipe that is gone,
  // the deadline).
  void send(const nlohmann::json& header, const std::vector<WireArray>& arrays, double timeout_s);
  // Waits for the answer to the request sent and reads it into `out`, whose array buffers are
  // reused; the clock stops once the answer's arrays are read. Throws kd::Error (timeout, early
  // end, bad frame).
  void receive(TimedFrame& out);
  // Asks the worker to quit without waiting: workers asked together wind down together.
  void ask_to_quit();
  // Asks the worker to quit, waits for its box (killing what is left after a grace) and returns
  // what the box saw.
  sandbox::RunResult finish();
  // The host pid of the box's first process (its pid namespace's init).
  pid_t box_pid() const { return host_ ? host_->box_pid() : box_->init_pid(); }
  const std::string& name() const { return spec_.name; }
  // The worker named by spec.companion, served from this worker's box; throws kd::Error when the
  // spec named none. Its calls are not timed by CPU (it has no box of its own), and it ends
  // with this worker.
  Worker& companion();

 private:
  explicit Worker(WorkerSpec spec) : spec_(std::move(spec)) {}
  // Makes the two pipes and the data file in `dir` (which must not exist) and opens them.
  void open_pipes(const std::filesystem::path& dir);
  // Whether the worker can still answer: its box runs, and a companion's own process (once its
  // pid is known) has not ended.
  bool alive() const;
  // CPU time of this worker's box, less its companion's process (0 for a companion).
  double cpu_now() const;
  // A companion's first answer carries its pid inside the box: the host's clock leaves it out.
  void note_companion_pid(const nlohmann::json& header);

  WorkerSpec spec_;
  std::unique_ptr<sandbox::Box> box_;
  UniqueFd request_, reply_, data_;
  Worker* host_ = nullptr;             // a companion's: the worker whose box it shares
  std::unique_ptr<Worker> companion_;  // a host's
  pid_t companion_pid_ = 0;            // a host's: its companion's process, on the host
  std::thread runner_;
  std::atomic<bool> running_{false};
  std::mutex done_mutex_;  // with done_: running_ turning false
  std::condition_variable done_;
  // The request in flight: its deadline and where its clocks started.
  bool pending_ = false;
  std::chrono::steady_clock::time_point deadline_, sent_at_;
  double cpu_at_send_ = 0;
  bool asked_to_quit_ = false;
  sandbox::RunResult result_;
  bool finished_ = false;
};

}  // namespace kd::verify
