// The verifier's brief (docs/briefs.md): the fields of the kernel-verifier input table, the
// pre-registered bar and hypothesis, and BRIEFS sections 1 and 3 pasted. Nothing of the author's
// transcript goes in.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "briefs/brief.h"

namespace kd::briefs {

// What the dispatcher knows at verification time (absolute paths on the verifier's side).
struct VerifierInputs {
  std::filesystem::path wiki;               // wiki root; the experiment page path is made from it
  std::filesystem::path reference;          // the reference module in the frozen snapshot
  std::filesystem::path candidate;          // the final candidate at its ship path in the snapshot
  contract::Chip chip;                      // the verifier's own chip
  std::filesystem::path artifact_dir;       // raw/profiles/<campaign_tag>/<slug>-vNNN/verifier
  std::string mode = "screen";              // screen | full
  std::optional<std::string> author_claim;  // context only, never the verifier's numbers
};

struct VerifierBrief {
  std::string family;
  std::string experiment;
  std::string author_brief_sha256;
  std::filesystem::path experiment_page;
  std::filesystem::path reference;
  std::string reference_sha256;
  std::filesystem::path candidate;
  std::string parity_spec;
  contract::Chip chip;
  std::filesystem::path artifact_dir;
  std::string mode;
  std::optional<std::string> author_claim;
  double bar = 0;
  std::string hypothesis, mechanism, predicted_signal, falsification;
  std::vector<PastedPart> reading;  // BRIEFS sections for the verifier
  std::vector<std::string> warnings;

  std::string markdown() const;
  nlohmann::json json() const;
  std::string sha256() const;  // of markdown()
};

struct VerifierBriefOutcome {
  std::optional<VerifierBrief> brief;
  Problems problems;  // every missing or invalid field, named
};

VerifierBriefOutcome make_verifier_brief(const Brief& author, const VerifierInputs& inputs);

}  // namespace kd::briefs
