// run.json: what the author phase of one experiment recorded for the phases after it (the
// verifier, the audit, the report). Written once the author session ends.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace kd::contract {

struct RunRecord {
  std::filesystem::path wiki;  // absolute
  std::string family, experiment;
  std::string branch;  // as made (it may carry a collision suffix)
  std::filesystem::path worktree, gitdir, home_repo;
  std::string integration_branch;
  std::string base_commit;  // the integration branch's tip the branch started from
  std::string author_chip;
  std::string chips;  // the inventory file given, or "" for the default
  std::string brief_sha256;
  std::string author_transcript_head;
  std::string end_reason;  // contract::EndReason as text

  nlohmann::json to_json() const;
  // Throws kd::Error naming `origin` and the missing or mistyped field.
  static RunRecord from_json(const nlohmann::json& j, const std::string& origin);
  // Reads <run_dir>/run.json; throws kd::Error when it is absent ("the author phase of this run
  // has not ended") or malformed.
  static RunRecord load(const std::filesystem::path& run_dir);
  void save(const std::filesystem::path& run_dir) const;
};

}  // namespace kd::contract
