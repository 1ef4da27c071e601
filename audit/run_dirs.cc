#include "audit/run_dirs.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "audit/wiki_context.h"
#include "common/files.h"
#include "contract/run_record.h"
#include "contract/transcript_chain.h"
#include "contract/wiki_layout.h"

namespace kd::audit {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// The JSON object in `path`, or null when it is absent or not an object.
json read_object(const fs::path& path) {
  if (!fs::is_regular_file(path)) return nullptr;
  try {
    json j = json::parse(read_file(path), nullptr, false);
    return j.is_object() ? j : json();
  } catch (const std::exception&) {
    return nullptr;
  }
}

// The last transcript head the campaign journal next to `run_dir` recorded for `key` when a
// session ended.
std::optional<std::string> journal_head(const fs::path& run_dir, const std::string& key) {
  const fs::path journal = run_dir.parent_path() / "journal.jsonl";
  if (!fs::is_regular_file(journal)) return std::nullopt;
  std::string text = read_file(journal);
  std::optional<std::string> head;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) break;  // a torn last line was never acted on
    json r = json::parse(text.begin() + static_cast<long>(pos),
                         text.begin() + static_cast<long>(nl), nullptr, false);
    pos = nl + 1;
    if (!r.is_object() || r.value("experiment", "") != key || !r.contains("data")) continue;
    const json& d = r["data"];
    const std::string type = r.value("type", "");
    // Only the records written once a session ended: an author_turn's head is passed by the
    // records after it while the session goes on.
    if ((type == "finished" || type == "error") && d.is_object() && d.contains("transcript_head") &&
        d["transcript_head"].is_string() && !d["transcript_head"].get<std::string>().empty())
      head = d["transcript_head"].get<std::string>();
  }
  return head;
}

void compare(std::vector<Finding>& out, const std::string& actual, const fs::path& transcript,
             const std::optional<std::string>& recorded, const std::string& where) {
  if (!recorded || recorded->empty() || *recorded == actual) return;
  Finding f;
  f.rule = Rule::ChainIntegrity;
  f.severity = Severity::Violation;
  f.defect = "the transcript's chain head is " + actual + " but " + where + " recorded " +
             *recorded + ": the transcript was cut or replaced after the run";
  f.evidence = transcript.string();
  out.push_back(std::move(f));
}

}  // namespace

std::vector<fs::path> experiment_runs(const fs::path& path) {
  std::vector<fs::path> out;
  if (!fs::is_directory(path)) return out;
  if (fs::is_regular_file(path / "run.json")) return {path};
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(
           path, fs::directory_options::skip_permission_denied, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    if (!it->is_directory(ec)) continue;
    const std::string name = it->path().filename().string();
    if (name == ".git" || name == ".repo" || it.depth() >= 3) {
      it.disable_recursion_pending();
      continue;
    }
    if (fs::is_regular_file(it->path() / "run.json")) {
      out.push_back(it->path());
      it.disable_recursion_pending();
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<AuditContext> context_from_run(const fs::path& run_dir, std::string& why) {
  try {
    const contract::RunRecord run = contract::RunRecord::load(run_dir);
    AuditContext ctx = context_from_wiki(run.wiki, run.family, run.experiment);
    // What the run made, not what the wiki would name today.
    if (!run.worktree.empty()) ctx.worktree = run.worktree.string();
    if (!run.home_repo.empty()) ctx.repository = run.home_repo.string();
    if (!run.branch.empty()) ctx.branch = run.branch;
    return ctx;
  } catch (const std::exception& e) {
    why = "the run's wiki context could not be read (" + std::string(e.what()) + ")";
    return std::nullopt;
  }
}

std::vector<Finding> transcript_head_findings(const fs::path& run_dir) {
  std::vector<Finding> out;
  const json run = read_object(run_dir / "run.json");
  const json outcome = read_object(run_dir / "outcome.json");
  auto recorded = [](const json& j, const json::json_pointer& ptr) -> std::optional<std::string> {
    if (j.is_object() && j.contains(ptr) && j[ptr].is_string()) return j[ptr].get<std::string>();
    return std::nullopt;
  };
  const fs::path author = run_dir / "author/transcript.jsonl";
  if (fs::is_regular_file(author)) {
    const contract::ChainReport chain = contract::verify_chain_file(author);
    std::string key;
    if (run.is_object())
      key = contract::ExperimentId{run.value("family", ""), run.value("experiment", "")}.key();
    compare(out, chain.head, author, recorded(run, "/author_transcript_head"_json_pointer),
            "run.json");
    compare(out, chain.head, author, recorded(outcome, "/transcript_heads/author"_json_pointer),
            "outcome.json");
    if (!key.empty())
      compare(out, chain.head, author, journal_head(run_dir, key), "the campaign journal");
  }
  const fs::path verifier = run_dir / "verifier/transcript.jsonl";
  if (fs::is_regular_file(verifier)) {
    const contract::ChainReport chain = contract::verify_chain_file(verifier);
    compare(out, chain.head, verifier, recorded(outcome, "/transcript_heads/verifier"_json_pointer),
            "outcome.json");
  }
  return out;
}

void merge_report(AuditReport& into, AuditReport part) {
  for (auto& f : part.findings)
    into.findings.push_back(std::move(f));
  for (auto& f : part.files)
    into.files.push_back(std::move(f));
  for (auto& [rule, why] : part.not_checked)
    into.not_checked.emplace(rule, std::move(why));
  for (const auto& [rule, n] : part.suppressed)
    into.suppressed[rule] += n;
  for (const auto& [kind, n] : part.events)
    into.events[kind] += n;
  for (auto& d : part.supervision)
    into.supervision.push_back(std::move(d));
}

}  // namespace kd::audit
