// The runs a `kdispatch mcp` server dispatched (docs/mcp.md). Each is `kdispatch run` for one
// family, a child process in its own process group with its own run root under the server's
// root (<root>/<run id>/runs), its stdout and stderr in files beside it. Status comes from that
// run root's journal and the child's exit; nothing polls: a wait sleeps on inotify over the
// journal's folders, the child's pidfd and the call's own wake-up descriptor. A supervised run's
// author asks through the file channel in <root>/<run id>/supervision
// (dispatcher/file_supervisor.h): pending and decide read and answer it.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/fd.h"

namespace kd::mcp {

// A tool's failure, answered as a result with isError (the model may correct and retry).
struct ToolFailure {
  std::string message;
};

struct DispatchSpec {
  std::filesystem::path wiki;
  std::string family, experiment;
  std::vector<std::string> run_args;  // options of `kdispatch run` besides wiki, family, run root
  bool supervise = false;             // the author asks through the run's supervision folder
};

class Runs {
 public:
  // `root` is created when missing; `keys` are added to each child's environment.
  Runs(std::filesystem::path root, std::map<std::string, std::string> keys);
  ~Runs();

  // Starts the run and returns its status at once.
  nlohmann::json dispatch(const DispatchSpec& spec);
  // {run_id, family, experiment, state, phase, turns, cost_usd, verdict?, exit_code?, ...};
  // a supervised run adds `pending` (requests awaiting a decision), and its state is
  // awaiting_approval while the author waits on one.
  // Runs of an earlier server under the same root are read from their files.
  nlohmann::json status(const std::string& run_id);
  // Every run under the root, newest dispatch last.
  nlohmann::json status_all();
  // Returns when the run's status changes, the run ends, `timeout_s` passes or `wake_fd` becomes
  // readable (the call was cancelled). `heartbeat` is called about every 10 s of quiet.
  nlohmann::json wait(const std::string& run_id, double timeout_s, int wake_fd,
                      const std::function<void(const nlohmann::json&, double)>& heartbeat);
  // The requests of a supervised run awaiting a decision, oldest first, each with the error of
  // an answer refused for it, if any.
  nlohmann::json pending(const std::string& run_id);
  // Answers the pending request `call_id` (an answer document of dispatcher/file_supervisor.h).
  // ToolFailure for a run that is not supervised, an unknown call, a request already decided or
  // an answer that does not fit the request.
  nlohmann::json decide(const std::string& run_id, const std::string& call_id,
                        const nlohmann::json& answer);
  // SIGTERM twice to the process group (the campaign journals what it has, then stops), SIGKILL
  // when it has not exited after a few seconds.
  nlohmann::json cancel(const std::string& run_id);

  // The experiment's run directory (outcome.json, transcripts), once the journal names it.
  std::filesystem::path experiment_dir(const std::string& run_id);
  // The run's dispatch record: wiki, family, experiment.
  nlohmann::json dispatch_record(const std::string& run_id);

 private:
  struct Child {
    pid_t pid = -1;
    UniqueFd pidfd;
    bool exited = false;
    int exit_code = -1;  // -1: killed by a signal
    int signal = 0;
    bool cancelled = false;
  };
  std::filesystem::path run_dir(const std::string& run_id) const;
  // Collects the child's exit if it has happened; caller holds mu_.
  void reap(Child& c);
  nlohmann::json status_locked(const std::string& run_id);
  std::string redact(std::string text) const;
  nlohmann::json redact(const nlohmann::json& doc) const;

  std::filesystem::path root_;
  std::map<std::string, std::string> keys_;
  std::mutex mu_;
  std::map<std::string, Child> children_;
};

}  // namespace kd::mcp
