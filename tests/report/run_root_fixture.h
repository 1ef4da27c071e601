// Run roots for the report's tests, written in the formats kdispatch writes them: a campaign's
// journal with chosen times, run directories with brief.json, outcome.json, audit.json and a
// sealed author transcript (TranscriptBuilder).
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/fixtures.h"

namespace kd::test {

class CampaignFixture {
 public:
  // <root>/<name>/journal.jsonl; run directories at <root>/<name>/<slug>-<vNNN>.
  CampaignFixture(std::filesystem::path root, std::string name);

  // Appends a journal record for `experiment` (<slug>/vNNN).
  void record(const std::string& ts, const std::string& type, const std::string& experiment,
              const nlohmann::json& data);
  // The run directory of `experiment` (created).
  std::filesystem::path run_dir(const std::string& experiment) const;
  void write_brief(const std::string& experiment, const std::string& hypothesis, double bar);
  void write_outcome(const std::string& experiment, const std::string& verdict, double speedup);
  void write_audit(const std::string& experiment, const std::vector<std::string>& severities);
  void write_transcript(const std::string& experiment, const TranscriptBuilder& t);
  // A whole experiment through the journal: dispatched at t0 on chip `author_chip`, verified on
  // `verifier_chip` from t1 to t2, verdict at t3 (times are "HH:MM:SS" of 2026-03-02).
  void verified(const std::string& experiment, const std::string& author_chip,
                const std::string& verifier_chip, const std::string& t0, const std::string& t1,
                const std::string& t2, const std::string& t3, const std::string& verdict,
                double cost);

  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
  unsigned long seq_ = 0;
};

// "2026-03-02T<hms>Z".
std::string at(const std::string& hms);

// An author transcript: header on `chip`, one response per turn with one tool call each (a
// run_on_chip call from start to end of every turn), and an end record. `text` is the model's
// text of every turn, `output` every tool's result.
TranscriptBuilder author_transcript(int turns, const std::string& chip, const std::string& text,
                                    const std::string& output, const std::string& start_hms);

}  // namespace kd::test
