// What a campaign tells the outside besides its journal and its process record
// (campaign_process.h), docs/report.md: the HTML report regenerated when the run ends, and the
// notification command run on each outcome and at the end. None of them can fail a campaign: a
// failure is a warning on stderr.
#pragma once

#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dispatcher/campaign.h"

namespace kd::dispatcher {

// The report of the run root in <run_root>/report; returns its index ("" when it failed, with
// the reason on stderr).
std::string regenerate_report(const std::filesystem::path& run_root);

// The event for one experiment's outcome, and for the campaign's end.
nlohmann::json outcome_event(const ExperimentResult& r);
nlohmann::json campaign_end_event(const CampaignReport& r, const std::string& report_index);

// Runs the user's command (argv, never a shell) with one event as JSON on its stdin, one at a
// time, each given `timeout_s` before it is killed. An empty argv notifies nobody.
class Notifier {
 public:
  explicit Notifier(std::vector<std::string> argv, double timeout_s = 30)
      : argv_(std::move(argv)), timeout_s_(timeout_s) {}
  void send(const nlohmann::json& event);

 private:
  std::vector<std::string> argv_;
  double timeout_s_;
  std::mutex mu_;
};

}  // namespace kd::dispatcher
