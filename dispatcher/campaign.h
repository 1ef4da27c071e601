// The overnight loop (`kdispatch run`, docs/dispatcher.md): every committed in_progress experiment
// of the wiki (or of the named families) goes author -> verifier -> verdict. Families run in
// parallel, each family's experiments one after another; every state change is journalled, so
// a campaign killed at any point is finished by running it again with `resume`.
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "agents/model_config.h"
#include "contract/verdict.h"
#include "dispatcher/chip_backend.h"

namespace kd::dispatcher {

struct CampaignOptions {
  std::filesystem::path wiki;
  std::vector<std::string> families;           // empty: every family with a queued experiment
  std::optional<std::filesystem::path> chips;  // inventory; default policies/chips.json
  std::filesystem::path run_root = "run-root";
  agents::ModelConfig model;
  agents::Budgets budgets;           // per author session
  double max_campaign_cost_usd = 0;  // > 0: no new dispatch once the campaign has spent this
  std::optional<std::string> verify_cmd;
  std::string mode = "full";
  std::vector<std::filesystem::path> tool_dirs;
  // Continue experiments the journal shows unfinished, and retry those that ended in an error.
  bool resume = false;
  bool file = false;  // file each verdict into the wiki
  int parallel = 0;   // families at once; 0: the number of chips in the inventory
  // Supervised authors (AuthorOptions::supervise, supervise_dir): one experiment at a time,
  // whatever `parallel` says, since one person answers one session's requests at a time (and
  // call ids are unique within a session only). Each session has its own supervisor; a session
  // the person stops goes no further (no verifier) and the campaign goes on with the next.
  bool supervise = false;
  std::optional<std::filesystem::path> supervise_dir;
  double status_interval_s = 15;
  // A provider outage pauses dispatch: the first pause lasts outage_backoff_s, each next one
  // twice as long; once the pauses would pass outage_wait_s in all, the campaign stops (its
  // experiments stay queued for --resume). 0: stop at the first outage.
  double outage_backoff_s = 10;
  double outage_wait_s = 1800;
  // Written to <run-root>/campaign-process.json with the pid, host and heartbeat (command line,
  // model, budgets, version).
  nlohmann::json process_info = nlohmann::json::object();
  // One status line per active session, every status_interval_s (default: stderr).
  std::function<void(const std::string&)> on_status;
  // The notifications' and the report's (campaign_report.h): the command run with each
  // outcome's event on stdin (empty: none), and whether the HTML report is regenerated at the end.
  std::vector<std::string> notify_cmd;
  bool write_report = true;
  ChipBackend* chip_backend =
      nullptr;  // shared by every experiment; else the inventory's, made here
};

struct ExperimentResult {
  std::string experiment;  // <slug>/vNNN
  contract::ExperimentOutcome outcome;
  std::vector<std::string> reasons;
  std::filesystem::path run_dir;
  bool earlier = false;  // the journal already held its verdict
  bool is_error() const { return outcome.kind == contract::OutcomeKind::Error; }
};

struct CampaignReport {
  std::vector<ExperimentResult> experiments;  // in queue order
  bool stopped = false;                       // a stop request left work undispatched
  // Why the campaign stopped dispatching by itself (an auth failure, a spend cap, a provider
  // down past outage_wait_s); empty when it did not.
  std::string halted;
  double wall_s = 0;
  double cpu_s = 0;  // this process's own user+system time
};

// `stop` is polled between experiments: once set, nothing new is dispatched and the experiments
// in flight finish. An experiment whose infrastructure failed ends in an error (journalled with
// its cause), never in a verdict; an auth failure or a spend cap stops all dispatch at once, an
// outage pauses it (CampaignOptions::outage_backoff_s).
CampaignReport run_campaign(const CampaignOptions& options, const std::atomic<bool>& stop);

}  // namespace kd::dispatcher
