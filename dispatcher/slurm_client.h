// Slurm through its own command-line clients (docs/slurm.md): submitting a batch job, reading
// every job's state with one `squeue --json` (Slurm 22.05, openapi v0.0.38), falling back to
// `scontrol show job` and then the jobcomp file for jobs squeue has forgotten, cancelling, and
// reading a partition's nodes and GRES. Every command runs with a deadline (common/subprocess.h);
// a failure is a kd::Error naming the command and quoting Slurm's stderr.
//
// No secret reaches a job: sbatch runs with PATH and the SLURM_*/SBATCH_* variables alone and
// --export=ALL, so a job's environment is those, Slurm's own variables and what its script sets.
// Jobs are submitted with --no-requeue: a job whose node fails ends as NODE_FAIL (an error with
// Slurm's reason) instead of running twice.
//
// The Watcher is the one poller for every job in flight: no thread or process per job.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace kd::dispatcher::slurm {

struct ClientOptions {
  std::map<std::string, std::string> env;  // extra env for the Slurm commands (SLURM_CONF is
                                           // inherited from kdispatch's env when not set here)
  std::chrono::milliseconds command_deadline{10000};  // each sbatch/squeue/scontrol/scancel call
};

struct SubmitRequest {
  std::string name;                       // --job-name
  std::string partition;                  // --partition (empty: the cluster's default)
  std::string gres;                       // --gres (e.g. "gpu:tpu:1")
  std::filesystem::path script;           // the batch script, already written, executable
  std::filesystem::path output;           // --output (stdout+stderr of the batch step)
  std::filesystem::path chdir;            // --chdir
  std::optional<int> time_limit_minutes;  // --time
  std::vector<std::string> extra_args;    // verbatim sbatch options from the inventory
};

// Unknown: Slurm no longer knows the id (not in squeue, scontrol nor the jobcomp file).
enum class Phase { Pending, Running, Succeeded, Failed, Unknown };

const char* to_string(Phase phase);

struct JobStatus {
  std::string id;
  std::string state;  // Slurm's word: PENDING RUNNING COMPLETED FAILED CANCELLED TIMEOUT
                      // NODE_FAIL PREEMPTED OUT_OF_MEMORY ...
  Phase phase = Phase::Unknown;
  int exit_code = -1;      // the batch script's, when finished (Slurm's ExitCode, first half)
  int signal = 0;          // the signal that ended it (ExitCode's second half), when finished
  std::string node;        // where it ran / runs
  std::string gres_index;  // "2" (from gres_detail "gpu:tpu:1(IDX:2)"), when Slurm still shows it
  std::string reason;      // Slurm's state reason ("NodeDown", "None", ...), for error messages
};

// Succeeded, Failed or Unknown: the job will not change any more.
bool is_final(Phase phase);

// Slurm's job state word to a phase: COMPLETED succeeded; every other final state failed (a
// script that exited non-zero is FAILED with reason NonZeroExitCode); states still to move on
// (PENDING, RUNNING, COMPLETING, SUSPENDED, REQUEUED, ...) are Pending or Running.
Phase phase_of_state(const std::string& state);

// The parsers, public for tests. `squeue --json` output -> the jobs it lists, by id.
std::map<std::string, JobStatus> parse_squeue_json(const std::string& text);
// One `key=value key=value ...` line as `scontrol show job -o` and jobcomp/filetxt write it; a
// word without '=' continues the previous value (a path with a space).
std::map<std::string, std::string> parse_key_values(const std::string& line);
// A job from such a line (scontrol's JobState/Reason/ExitCode/NodeList/GRES, or jobcomp's).
JobStatus status_from_key_values(const std::map<std::string, std::string>& fields);

class Client {
 public:
  explicit Client(ClientOptions options = {});
  // sbatch --parsable --export=ALL --no-requeue, with the environment of the comment above;
  // throws kd::Error naming sbatch, the script and Slurm's stderr. Returns the job id.
  std::string submit(const SubmitRequest& request);
  // One `squeue --json` (it ignores -j in 22.05: filtered here); ids it no longer lists:
  // `scontrol show job -d -o ID`, then the jobcomp file if configured; still nothing:
  // Phase::Unknown. Throws kd::Error when squeue fails.
  std::map<std::string, JobStatus> query(const std::vector<std::string>& ids);
  // scancel; unknown or finished ids are fine.
  void cancel(const std::vector<std::string>& ids);
  struct Partition {
    std::string name;
    int nodes = 0;
    std::map<std::string, int> gres_per_node;  // "gpu:tpu" -> 4: what every node of it has
  };
  // From `sinfo --json`; throws kd::Error naming a partition that does not exist.
  Partition partition(const std::string& name);

  // The jobcomp/filetxt file from `scontrol show config`, once; nullopt when the cluster keeps
  // no such file.
  std::optional<std::filesystem::path> jobcomp_file();

 private:
  struct Output {
    int exit_code = 0;
    std::string out, err;
  };
  // Runs a Slurm command within the deadline; throws naming it (and `about`, e.g. the script)
  // when it cannot run, times out, or exits non-zero and `may_fail` is false. The command has
  // kdispatch's environment plus options_.env; with `slurm_env_only`, only their PATH, SLURM_*
  // and SBATCH_* variables (sbatch's, which a job inherits).
  Output run(const std::vector<std::string>& argv, const std::string& about, bool may_fail = false,
             bool slurm_env_only = false);

  ClientOptions options_;
  std::mutex jobcomp_mu_;
  bool jobcomp_known_ = false;
  std::optional<std::filesystem::path> jobcomp_;
};

// One poller for every job in flight (no thread or process per job). Callers are the author's
// tool threads and the campaign's worker threads, which block: `wait` is thread-safe. One poll
// thread runs `query` over all watched ids every `interval` while any is watched, and sleeps on a
// condition variable (no polling) while none is.
class Watcher {
 public:
  Watcher(Client& client, std::chrono::milliseconds interval);
  ~Watcher();  // stop() and join
  Watcher(const Watcher&) = delete;
  Watcher& operator=(const Watcher&) = delete;
  // Blocks until the job's phase is Succeeded, Failed or Unknown; nullopt once `deadline` passed
  // or stop() was called. `done_file`, which the job writes as its last act, is looked for
  // between polls (a stat every kDoneFileCheck): once it is there Slurm is asked at once, and
  // again every 2 x kDoneFileCheck for kEndingWindow while the job is still ending, instead of
  // at the next interval. With `until_done_file` the wait also ends as soon as that file is
  // there, with the status of the last poll (phase Running when no poll has seen the job yet):
  // a job that goes on after writing it (a declined try holding its chip) need not end first.
  std::optional<JobStatus> wait(const std::string& id,
                                std::optional<std::chrono::steady_clock::time_point> deadline,
                                const std::filesystem::path& done_file = {},
                                bool until_done_file = false);
  static constexpr std::chrono::milliseconds kDoneFileCheck{50};
  static constexpr std::chrono::milliseconds kEndingWindow{2000};
  void stop();  // the one shutdown path: wakes every waiter

  // How many `query` calls the poll thread made, and the last one's error ("" after a success):
  // a query that fails (slurmctld unreachable) is retried at the next interval, waiters wait on.
  std::uint64_t polls() const;
  std::string last_error() const;

 private:
  struct Watched {
    int waiters = 0;
    std::optional<JobStatus> final;
    std::optional<JobStatus> last;  // the last poll's, while not final
    std::filesystem::path done_file;
    std::optional<std::chrono::steady_clock::time_point> done_seen;  // when it appeared
    bool awaits_done_file() const { return !final && !done_seen && !done_file.empty(); }
  };
  void poll_loop();
  // Marks the watched jobs whose done file appeared; true when one did. Called with `lock` (on
  // mu_) held, which it releases while it looks.
  bool notice_done_files(std::unique_lock<std::mutex>& lock);

  Client& client_;
  const std::chrono::milliseconds interval_;
  mutable std::mutex mu_;
  std::condition_variable poll_cv_;     // the poll thread: a job to watch, or stop
  std::condition_variable waiters_cv_;  // the waiters: a job finished, or stop
  std::map<std::string, Watched> watched_;
  bool stopping_ = false;
  std::uint64_t joined_ = 0;  // waiters so far: a new one ends the poll thread's sleep
  std::uint64_t polls_ = 0;
  std::string last_error_;
  std::thread thread_;
};

}  // namespace kd::dispatcher::slurm
