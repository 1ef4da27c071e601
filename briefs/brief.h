// The author brief (docs/briefs.md): the ten checklist items of the authoring skill resolved from
// the wiki's committed content, or the full list of reasons it cannot be assembled.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "briefs/binding.h"
#include "briefs/problem.h"
#include "briefs/stub.h"
#include "contract/chips.h"

namespace kd::briefs {

struct BriefRequest {
  std::filesystem::path wiki;                    // the wiki repository root
  std::string family;                            // slug
  std::string experiment;                        // "v001"
  std::optional<std::filesystem::path> chips;    // inventory; default policies/chips.json
  std::optional<std::filesystem::path> mandate;  // default policies/load-mandate.json
};

// One piece of pasted reading: where it came from and the exact bytes the author receives.
struct PastedPart {
  std::string source;   // wiki-relative path
  std::string section;  // heading pasted, "(whole page)", or "start through <heading>"
  std::string sha256;   // of `content`
  std::string content;
};

struct Brief {
  std::string family;
  std::string experiment;
  std::string wiki_commit;
  Binding binding;
  Stub stub;
  std::string branch;            // kernel/<slug>-v<NNN>
  std::string worktree;          // wiki/kernel_experiments/<slug>/pallas/.repo (wiki-relative)
  std::string home_repo;         // raw/code/<home_repo> (wiki-relative)
  std::string home_commit;       // integration_branch's commit in the home repo
  std::string reference_sha256;  // of the reference module's committed content
  contract::Chip chip;
  std::vector<PastedPart> reading;           // the load mandate, in order
  std::vector<PastedPart> verifier_reading;  // BRIEFS sections for the verifier brief
  std::vector<std::string> warnings;

  // What the author receives as its system prompt; deterministic for the same wiki state.
  std::string markdown() const;
  // The machine form: each item, each pasted part with source, section, sha256 and content.
  nlohmann::json json() const;
  // sha256 hex of markdown(): the identity recorded in the author transcript's header.
  std::string sha256() const;
};

struct BriefOutcome {
  std::optional<Brief> brief;  // set only when `problems` is empty
  Problems problems;
};

// Never throws for a broken wiki (every defect becomes a Problem); throws kd::Error for a broken
// policy file.
BriefOutcome build_brief(const BriefRequest& request);

// "refused: <n> problem(s)\n- <item>: <reason>\n..." for people; JSON for machines.
std::string render_problems(const Problems& problems);
nlohmann::json problems_json(const Problems& problems);

}  // namespace kd::briefs
