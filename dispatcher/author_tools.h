// The author's tools as the dispatcher runs them (docs/agents.md): file tools and commands inside
// the session's box, run_on_chip under the chip lock for that call only, git_diff and commit on the
// host through libgit2 with the grammar enforced. The agents layer has already checked the
// arguments against the schemas; what is checked here needs the experiment.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "agents/tool_host.h"
#include "contract/chips.h"
#include "dispatcher/chip_backend.h"
#include "dispatcher/supervisor.h"
#include "git/repo.h"
#include "sandbox/box.h"

namespace kd::dispatcher {

struct AuthorToolConfig {
  sandbox::Box* box = nullptr;
  contract::Chip chip;
  // Where run_on_chip runs: locally in `box` under the chip's lock, or as a Slurm job in a box
  // opened from `spec` (the session box's own) on the node. Null: no run_on_chip.
  ChipBackend* chips = nullptr;
  sandbox::BoxSpec spec;
  std::filesystem::path run_dir;
  // Journals a record of the experiment (the Slurm jobs of run_on_chip).
  std::function<void(const char* type, nlohmann::json data)> record;
  // A resumed session's run_on_chip jobs that an earlier process submitted and never saw end
  // (job_submitted data): a replayed call (same id, same command) collects its job instead of
  // submitting it again.
  std::vector<nlohmann::json> jobs_in_flight;
  std::filesystem::path worktree;
  std::filesystem::path gitdir;
  std::string branch;
  std::string family;                // slug
  std::string experiment;            // vNNN
  Supervisor* supervisor = nullptr;  // --supervise: decisions for run, run_on_chip, commit
  // Called after each commit (the pipeline journals it before the model hears of it).
  std::function<void(const git::CommitInfo&, const std::string& candidate)> on_commit;
  double chip_wait_s = 3600;  // how long run_on_chip waits for a busy chip before giving up
  std::map<std::string, std::string> env;  // set for every command (e.g. KD_ARTIFACT_DIR, PATH)
  std::vector<git::CommitInfo> existing_commits;  // a resumed session's commits on the branch
  std::string finish_reply = "finish accepted; the candidate goes to the independent verifier";
};

class AuthorToolHost : public agents::ToolHost {
 public:
  explicit AuthorToolHost(AuthorToolConfig config)
      : cfg_(std::move(config)), commits_(cfg_.existing_commits) {}
  agents::ToolOutcome call(const agents::ToolCall& call) override;

  std::vector<git::CommitInfo> commits() const;

 private:
  agents::ToolOutcome read_file(const nlohmann::json& in);
  agents::ToolOutcome list_dir(const nlohmann::json& in);
  agents::ToolOutcome write_file(const nlohmann::json& in);
  agents::ToolOutcome edit_file(const nlohmann::json& in);
  agents::ToolOutcome run(const nlohmann::json& in, bool on_chip, const std::string& call_id);
  agents::ToolOutcome run_approved(const sandbox::RunRequest& req, const std::string& call_id);
  agents::ToolOutcome git_diff(const nlohmann::json& in);
  agents::ToolOutcome commit(const nlohmann::json& in, const std::string& call_id);
  agents::ToolOutcome commit_approved(const std::string& message, const std::string& candidate,
                                      const std::vector<std::string>& paths);

  AuthorToolConfig cfg_;
  mutable std::mutex mu_;
  std::vector<git::CommitInfo> commits_;
};

// "exit 0 · 12 ms\n--- stdout ---\n...": what the model reads of a command's result.
std::string describe_run(const sandbox::RunResult& r);

}  // namespace kd::dispatcher
