#include "contract/run_record.h"

#include "common/errors.h"
#include "common/files.h"
#include "common/json_read.h"

namespace kd::contract {

using nlohmann::json;
namespace fs = std::filesystem;

json RunRecord::to_json() const {
  return {{"wiki", wiki.string()},
          {"family", family},
          {"experiment", experiment},
          {"branch", branch},
          {"worktree", worktree.string()},
          {"gitdir", gitdir.string()},
          {"home_repo", home_repo.string()},
          {"integration_branch", integration_branch},
          {"base_commit", base_commit},
          {"author_chip", author_chip},
          {"chips", chips},
          {"brief_sha256", brief_sha256},
          {"author_transcript_head", author_transcript_head},
          {"end_reason", end_reason}};
}

RunRecord RunRecord::from_json(const json& j, const std::string& origin) {
  JsonObjectReader r(j, origin);
  auto text = [&](const char* key) {
    if (!r.has(key)) return std::string();
    if (!r.at(key).is_string()) r.field_error(key, "must be a string");
    return r.at(key).get<std::string>();
  };
  RunRecord rec;
  rec.wiki = text("wiki");
  rec.family = text("family");
  rec.experiment = text("experiment");
  rec.branch = text("branch");
  rec.worktree = text("worktree");
  rec.gitdir = text("gitdir");
  rec.home_repo = text("home_repo");
  rec.integration_branch = text("integration_branch");
  rec.base_commit = text("base_commit");
  rec.author_chip = text("author_chip");
  rec.chips = text("chips");
  rec.brief_sha256 = text("brief_sha256");
  rec.author_transcript_head = text("author_transcript_head");
  rec.end_reason = text("end_reason");
  if (rec.base_commit.empty()) rec.base_commit = rec.integration_branch;
  if (rec.wiki.empty() || rec.home_repo.empty() || rec.family.empty() || rec.branch.empty() ||
      rec.base_commit.empty())
    throw Error("run record " + origin + " is incomplete");
  return rec;
}

RunRecord RunRecord::load(const fs::path& run_dir) {
  const fs::path file = run_dir / "run.json";
  if (!fs::is_regular_file(file))
    throw Error("no " + quote(file.string()) + ": the author phase of this run has not ended");
  return from_json(parse_json_document(read_file(file), quote(file.string())),
                   quote(file.string()));
}

void RunRecord::save(const fs::path& run_dir) const {
  write_file_atomic(run_dir / "run.json", to_json().dump(2) + "\n");
}

}  // namespace kd::contract
