// The checks before anything is dispatched (`kdispatch run`, `author`, `verify`): everything
// that can be known wrong before a branch, a worktree, a run directory or a journal record
// exists, and before any money is spent. Every problem is collected and named; none is fatal
// alone, so one run of the checks reports all of them. Nothing here writes anything.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "agents/model_config.h"
#include "briefs/queue.h"
#include "common/errors.h"

namespace kd::dispatcher {

struct PreflightInput {
  std::optional<std::filesystem::path> wiki;  // author and run
  std::vector<std::string> families;          // run: empty for every family
  // author: the one experiment (family, vNNN); run: every queued experiment of `families`.
  std::optional<std::pair<std::string, std::string>> experiment;
  std::optional<std::filesystem::path> run_dir;  // verify: the author's run
  std::optional<std::filesystem::path> chips;
  std::optional<std::filesystem::path> run_root;  // author and run: must be creatable
  std::optional<agents::ModelConfig> model;       // the author's (or the LLM verifier's) model
  agents::Budgets budgets;
  bool author = false;  // an author session will run (its box profile, its model)
  bool verify = false;  // a verification will run (its box profile, its command)
  std::optional<std::string> verify_cmd;
  std::vector<std::filesystem::path> tool_dirs;
};

struct PreflightReport {
  std::vector<std::string> checks;              // what was checked and found good, one line each
  std::vector<std::string> problems;            // what is wrong, one line each
  std::vector<briefs::QueuedExperiment> queue;  // run: the experiments it would dispatch
  bool ok() const { return problems.empty(); }
};

PreflightReport preflight(const PreflightInput& in);

// Thrown by the commands when preflight found problems: exits 2 with every problem listed.
class PreflightFailed : public InputError {
 public:
  explicit PreflightFailed(const PreflightReport& r);
};

}  // namespace kd::dispatcher
