// One verification (`kdispatch verify`, docs/dispatcher.md): the final candidate commit frozen into
// a snapshot, the verify command in the verifier's box on a chip other than the author's (locked
// for the whole verification), the receipt written where the author can never write, then the
// verdict by fixed rules into <run>/outcome.json and a filing proposal.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "agents/model_config.h"
#include "contract/chips.h"
#include "contract/verdict.h"
#include "dispatcher/chip_backend.h"
#include "dispatcher/journal.h"

namespace kd::dispatcher {

struct VerifyOptions {
  std::filesystem::path run_dir;    // <run-root>/<campaign>/<slug>-<vNNN>, made by the author phase
  std::optional<std::string> chip;  // the verifier's chip; default: another free one
  // Chips that authors are using now (a campaign knows): tried last, since holding one through a
  // verification would stall that author's next run_on_chip.
  std::vector<std::string> busy_chips;
  std::optional<std::filesystem::path> chips;    // inventory; default the run's, else policies/
  std::string mode = "full";                     // screen | full
  std::optional<std::string> verify_cmd;         // else the binding's verify_command, else kgate
  std::vector<std::filesystem::path> tool_dirs;  // read-only into the box, first on its PATH
  bool file = false;  // file the verdict into the wiki (page + RESULTS.tsv, committed)
  // An LLM verifier session after the receipt (its four sections go into the filing; the verdict
  // stays the rules').
  std::optional<agents::ModelConfig> verifier_model;
  JournalSet* journals = nullptr;       // a campaign run's shared journals; else opened here
  ChipBackend* chip_backend = nullptr;  // a campaign's; else the inventory's, made here
};

struct VerifyReport {
  std::string experiment;  // <slug>/vNNN
  contract::Verdict verdict = contract::Verdict::Inconclusive;
  std::vector<std::string> reasons;
  bool reused = false;  // the journal already held this verdict: nothing ran again
  std::filesystem::path outcome_path;
  nlohmann::json outcome;
};

// Chips the verifier may use, in preference order: another chip of the author's kind when the
// inventory has one (never the author's then), else the author's own. The order starts after
// the author's chip and wraps, so concurrent verifiers spread over the chips instead of all
// queueing on the first one; chips in `busy` (authors at work) go last.
std::vector<contract::Chip> verifier_chips(const contract::ChipInventory& inventory,
                                           const std::string& author_chip,
                                           const std::optional<std::string>& requested,
                                           const std::vector<std::string>& busy);

// Throws kd::Error for environment failures (no run, git, a layer of the box). Everything the
// author or the verify command did wrong ends in a verdict with its reasons.
VerifyReport run_verify(const VerifyOptions& options);

}  // namespace kd::dispatcher
