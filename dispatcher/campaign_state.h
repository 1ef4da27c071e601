// The state of every experiment of a campaign, folded from its journal (docs/dispatcher.md). The
// same fold serves `kdispatch status` and `kdispatch run --resume`.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "contract/journal_records.h"
#include "dispatcher/journal.h"

namespace kd::dispatcher {

namespace rec = contract::journal;

struct ExperimentState {
  std::string experiment;  // <slug>/vNNN
  std::string phase;       // the last record type
  std::string chip;
  std::string branch;
  std::string run_dir;
  int turns = 0;
  long input_tokens = 0, output_tokens = 0;
  double cost_usd = 0;
  std::vector<nlohmann::json> commits;  // committed records' data, in order
  std::string first_ts, last_ts;
  nlohmann::json finished;  // the finished record's data, or null
  nlohmann::json receipt;   // receipt_validated data, or null
  std::string verdict;
  bool done() const { return phase == rec::kVerdict; }
};

// Experiments in the order they were first dispatched.
std::vector<ExperimentState> fold_journal(const std::vector<JournalRecord>& records);

// One status line: family/experiment, phase, chip, turns, tokens, cost, elapsed.
std::string status_line(const ExperimentState& s, const std::string& now_ts);

}  // namespace kd::dispatcher
