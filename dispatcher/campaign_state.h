// The state of every experiment of a campaign, folded from its journal (docs/dispatcher.md). The
// same fold serves `kdispatch status` and `kdispatch run --resume`.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
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
  // The last error record's cause and message; `errors` counts them. Counters (turns, tokens,
  // cost) add up over the attempts: an attempt that failed was paid for.
  std::string error_cause, error_message;
  int errors = 0;
  std::string transcript_head;  // the last one journalled (author_turn, finished)
  // Slurm jobs by id: the job_submitted record's data, with the job_finished's as "finished".
  std::map<std::string, nlohmann::json> jobs;
  bool done() const { return phase == rec::kVerdict; }
  bool failed() const { return phase == rec::kError; }
  // The author phase completed: a retry verifies again instead of re-authoring.
  bool authored() const { return !finished.is_null(); }
};

// Experiments in the order they were first dispatched.
std::vector<ExperimentState> fold_journal(const std::vector<JournalRecord>& records);

// One status line: family/experiment, phase, chip, turns, tokens, cost, elapsed. `idle`: empty
// while the campaign that runs it is alive, else what it is ("dead", "stopped"): an unfinished
// experiment then shows as that, and its clock stops at its last record.
std::string status_line(const ExperimentState& s, const std::string& now_ts,
                        std::string_view idle = "");
// Seconds from its first record to its last (or to `now_ts` while it is worked on).
double elapsed_s(const ExperimentState& s, const std::string& now_ts, bool worked_on);

}  // namespace kd::dispatcher
