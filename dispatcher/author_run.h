// One author dispatch (`kdispatch author`, docs/architecture.md): brief -> worktree on a fresh
// branch -> the author's box -> the tool-use loop -> commits and a validated finish, all journalled
// and transcribed under <run-root>/<campaign>/<slug>-<vNNN>/.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "agents/model_config.h"
#include "agents/session_result.h"
#include "dispatcher/chip_backend.h"
#include "dispatcher/journal.h"
#include "git/repo.h"

namespace kd::dispatcher {

struct AuthorOptions {
  std::filesystem::path wiki;
  std::string family;
  std::string experiment;
  std::optional<std::filesystem::path> chips;  // inventory; default policies/chips.json
  std::optional<std::string> chip;             // overrides the binding's chip
  std::filesystem::path run_root = "run-root";
  agents::ModelConfig model;
  agents::Budgets budgets;
  // run, run_on_chip and commit wait for the supervising person's decision (docs/dispatcher.md
  // "Supervision"): at the terminal, or through the file channel in supervise_dir when set.
  bool supervise = false;
  std::optional<std::filesystem::path> supervise_dir;
  // Read-only into the box at the same path, e.g. a CPU verify tool the family's commands use.
  std::vector<std::filesystem::path> tool_dirs;
  JournalSet* journals = nullptr;       // a campaign run's shared journals; else opened here
  ChipBackend* chip_backend = nullptr;  // a campaign's; else the inventory's, made here
  // Continue the experiment's interrupted session (kdispatch run --resume): its branch, its
  // commits and its transcript, from the journal's dispatched record.
  bool resume = false;
  // The journal's last word on it is an error of the author phase: the failed session's
  // transcript is kept aside (author.error-N/) and a fresh session starts on the same branch.
  bool retry_after_error = false;
};

struct AuthorReport {
  bool refused = false;
  std::string refusal;  // the brief's problems, rendered
  std::filesystem::path run_dir;
  std::string branch;
  std::vector<git::CommitInfo> commits;
  agents::SessionResult session;
};

// Throws kd::Error for environment failures (a layer of the box, git, the model's setup), and
// ExperimentError, after journalling it, when the provider ended the session: that session is
// an error to retry, not something to verify.
AuthorReport run_author(const AuthorOptions& options);

}  // namespace kd::dispatcher
