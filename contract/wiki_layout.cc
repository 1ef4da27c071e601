#include "contract/wiki_layout.h"

namespace kd::contract {

bool is_family_slug(std::string_view s) {
  if (s.empty() || s.size() > kMaxSlug || s[0] == '-') return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  return true;
}

bool is_experiment_name(std::string_view s) {
  return s.size() == 4 && s[0] == 'v' && s[1] >= '0' && s[1] <= '9' && s[2] >= '0' && s[2] <= '9' &&
         s[3] >= '0' && s[3] <= '9';
}

std::string family_dir(std::string_view family) {
  return std::string(kExperimentsDir) + "/" + std::string(family) + "/pallas";
}

std::string binding_page(std::string_view family) {
  return family_dir(family) + "/program.md";
}

std::string worktree_dir(std::string_view family) {
  return family_dir(family) + "/.repo";
}

std::string home_repo_dir(std::string_view home_repo) {
  return "raw/code/" + std::string(home_repo);
}

std::string_view to_string(Role r) {
  return r == Role::Author ? "author" : "verifier";
}

std::string ExperimentId::key() const {
  return family + "/" + experiment;
}

std::string ExperimentId::run_name() const {
  return family + "-" + experiment;
}

std::string ExperimentId::branch(std::string_view campaign_tag, int collision) const {
  if (collision == 0) return "kernel/" + family + "-" + experiment;
  const std::string tag = campaign_tag.empty() ? "run" : std::string(campaign_tag);
  return "kernel/" + family + "-" + tag + (collision > 1 ? "-" + std::to_string(collision) : "") +
         "-" + experiment;
}

std::string ExperimentId::artifact_dir(std::string_view campaign_tag, Role role) const {
  return "raw/profiles/" + std::string(campaign_tag) + "/" + run_name() + "/" +
         std::string(to_string(role));
}

std::filesystem::path campaign_dir(const std::filesystem::path& run_root,
                                   std::string_view campaign_tag) {
  return run_root / (campaign_tag.empty() ? std::string("campaign") : std::string(campaign_tag));
}

}  // namespace kd::contract
