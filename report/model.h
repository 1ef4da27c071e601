// The report's data (docs/report.md): what a run root holds, read into plain values that the
// HTML and terminal renderers draw. A run root is one campaign directory (it has a
// journal.jsonl) or any folder above several; every campaign below it is read. Reading never
// throws for a campaign's content: a missing or unreadable file becomes a problem named on the
// campaign or the experiment, and the rest is still shown.
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kd::report {

// One bar of the chip timeline: a chip held for an author's run_on_chip call or a verification.
struct ChipInterval {
  std::string chip;
  std::string experiment;  // <slug>/vNNN
  std::string family;
  std::string kind;           // "author" | "verify"
  double start = 0, end = 0;  // seconds since the epoch
  bool open = false;          // not ended yet (a running campaign, or a crash): drawn to the end
};

struct AuditSummary {
  bool present = false;  // <run>/audit.json exists
  int findings = 0, violations = 0;
  std::string problem;  // unreadable audit.json
};

struct ExperimentRow {
  std::string key;  // <slug>/vNNN
  std::string family, version;
  std::filesystem::path run_dir;  // empty when the journal names none
  std::string page;               // the experiment page's file name, relative to the index
  std::string hypothesis;         // first line
  std::optional<double> bar;
  // The verdict word, or "error", "refused", "running" (work without a verdict in a campaign
  // still running), "unfinished" (the same in a campaign that ended).
  std::string outcome;
  std::vector<std::string> reasons;  // of the verdict or the error
  std::optional<double> speedup;     // from the verifier's receipt
  std::string receipt_verdict;
  std::string author_chip, verifier_chip;
  int turns = 0;
  long input_tokens = 0, output_tokens = 0, cache_read_tokens = 0, cache_write_tokens = 0;
  double cost_usd = 0;
  int commits = 0;
  int denials = 0;  // sandbox refusals recorded in the author transcript
  AuditSummary audit;
  std::string first_ts, last_ts;
  std::vector<std::string> problems;     // files that could not be read
  std::vector<ChipInterval> chip_calls;  // the author's run_on_chip calls (from its transcript)
};

// What `kdispatch run` recorded about itself (campaign-process.json), when it did.
struct RunInfo {
  bool present = false;
  std::string command_line, model, provider, mode;
  nlohmann::json budgets = nlohmann::json::object();
  std::string started, ended;  // ended empty: still running (or killed)
};

struct Campaign {
  std::string name;  // the campaign directory relative to the run root ("." for the root itself)
  std::filesystem::path dir;
  RunInfo run;
  std::vector<ExperimentRow> experiments;  // in the order they were first dispatched
  std::vector<ChipInterval> intervals;     // sorted by chip, then start
  bool running = false;                    // experiments without a verdict and no end recorded
  std::string first_ts, last_ts;
  double wall_s = 0;
  double cost_usd = 0;
  long input_tokens = 0, output_tokens = 0, cache_read_tokens = 0, cache_write_tokens = 0;
  std::map<std::string, int> outcomes;  // outcome -> count
  std::vector<std::string> problems;
};

struct Report {
  std::filesystem::path root;
  std::string generated;  // RFC 3339
  std::vector<Campaign> campaigns;
  std::size_t experiment_count() const;
};

struct TranscriptView;

// Reads every campaign under `root` (a directory holding journal.jsonl), at most `max_depth`
// folders deep. Throws kd::Error only when `root` is not a readable directory. Without
// `transcripts`, the author transcripts are left for the caller, who reads each once (for its
// page) and hands it to apply_transcript, then calls finish_campaign: write_report does.
Report load_report(const std::filesystem::path& root, bool transcripts = true, int max_depth = 4);

// One campaign directory; `name` is how the report names it.
Campaign load_campaign(const std::filesystem::path& dir, const std::string& name,
                       bool transcripts = true);

// What the row takes from its author transcript: denials, cache tokens, turns, chip calls.
void apply_transcript(ExperimentRow& row, const TranscriptView& author);
// The campaign's totals and timeline, from its rows (again after apply_transcript).
void finish_campaign(Campaign& c);

// The file name of an experiment's page: the campaign and the key, made safe for a file name.
std::string page_name(const std::string& campaign, const std::string& key);

}  // namespace kd::report
