// Where things of one experiment live in a wiki, built in one place: the family's pages and
// worktree, the home repository, the artifact directories of author and verifier, the branch and
// the names of its run. Every path is wiki-relative ('/'-separated) unless it says otherwise.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace kd::contract {

// A family slug: 1 to kMaxSlug characters of [a-z0-9-], not starting with '-'. Checked by hand,
// not by a regex: a regex engine recurses per character and a long argument overflows its stack.
inline constexpr size_t kMaxSlug = 64;
bool is_family_slug(std::string_view s);
// An experiment name: v and three digits.
bool is_experiment_name(std::string_view s);

// The family's pages: wiki/kernel_experiments/<slug>/pallas
std::string family_dir(std::string_view family);
// The family binding: <family_dir>/program.md
std::string binding_page(std::string_view family);
// Every family's directory lives under this one.
inline constexpr std::string_view kExperimentsDir = "wiki/kernel_experiments";
// The family worktree: <family_dir>/.repo
std::string worktree_dir(std::string_view family);
// A home repository: raw/code/<name>
std::string home_repo_dir(std::string_view home_repo);

enum class Role { Author, Verifier };
std::string_view to_string(Role r);  // "author" | "verifier"

// One experiment of one family.
struct ExperimentId {
  std::string family;      // slug
  std::string experiment;  // vNNN

  std::string key() const;       // <slug>/vNNN: the journal's and the report's name for it
  std::string run_name() const;  // <slug>-vNNN: its run directory
  // kernel/<slug>-vNNN; a name that collides with an existing branch is never reused, the
  // n-th alternative (n > 0) is kernel/<slug>-<campaign_tag>[-n]-vNNN.
  std::string branch(std::string_view campaign_tag = "", int collision = 0) const;
  // raw/profiles/<campaign_tag>/<slug>-vNNN/<role>: receipts and artifacts of one role
  std::string artifact_dir(std::string_view campaign_tag, Role role) const;
};

// <run-root>/<campaign_tag> ("campaign" when the binding has none).
std::filesystem::path campaign_dir(const std::filesystem::path& run_root,
                                   std::string_view campaign_tag);

}  // namespace kd::contract
