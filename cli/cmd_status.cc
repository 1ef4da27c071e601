#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli/args.h"
#include "cli/commands.h"
#include "common/errors.h"
#include "common/exit_codes.h"
#include "common/time.h"
#include "dispatcher/campaign_process.h"
#include "dispatcher/campaign_state.h"

namespace kd::cli {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// Every campaign journal in `dir` and the directories below it down to `depth` more levels (a
// demo root, a run root, a campaign directory or a folder above them), skipping git internals.
// A directory that cannot be read, or that another process removes meanwhile, is passed over:
// the folder may be shared with live runs.
void find_journals(const fs::path& dir, int depth, std::vector<fs::path>& out) {
  std::error_code ec;
  // An experiment's run directory holds boxes' scratch (the verifier's work and pipes): nothing
  // below it is a campaign, and a journal planted there is not followed, nor is a link.
  if (fs::exists(fs::symlink_status(dir / "run.json", ec))) return;
  if (fs::is_regular_file(fs::symlink_status(dir / "journal.jsonl", ec)))
    out.push_back(dir / "journal.jsonl");
  if (depth == 0) return;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code type_ec;
    if (name != ".git" && name != ".repo" && it->is_directory(type_ec) && !it->is_symlink(type_ec))
      find_journals(it->path(), depth - 1, out);
  }
}

std::vector<fs::path> find_journals(const fs::path& root) {
  std::vector<fs::path> out;
  find_journals(root, 4, out);
  std::sort(out.begin(), out.end());
  return out;
}

struct CampaignView {
  fs::path dir;
  dispatcher::Liveness live;
  std::vector<dispatcher::ExperimentState> states;
};

json experiment_json(const dispatcher::ExperimentState& s, const std::string& now, bool worked_on) {
  json j = {{"experiment", s.experiment},
            {"phase", s.phase},
            {"chip", s.chip},
            {"turns", s.turns},
            {"input_tokens", s.input_tokens},
            {"output_tokens", s.output_tokens},
            {"cost_usd", s.cost_usd},
            {"elapsed_s", dispatcher::elapsed_s(s, now, worked_on)},
            {"first_ts", s.first_ts},
            {"last_ts", s.last_ts},
            {"run_dir", s.run_dir},
            {"transcript_head", s.transcript_head},
            {"errors", s.errors}};
  j["state"] = s.done() ? "verdict" : s.failed() ? "error" : worked_on ? "active" : "interrupted";
  if (s.done()) j["verdict"] = s.verdict;
  if (s.failed()) j["error"] = {{"cause", s.error_cause}, {"message", s.error_message}};
  return j;
}

}  // namespace

// kdispatch status [--run-root DIR] [--json]: every campaign at or below DIR, whether the
// process that runs it is alive, and one line per experiment with its cost so far.
int cmd_status(const Args& args) {
  ParsedArgs p = parse_args(args, {{"run-root"}, {"json", false}});
  if (p.positional.size() > 1) throw UsageError("unexpected argument " + p.positional[1]);
  if (!p.positional.empty() && p.has("run-root"))
    throw UsageError("give the run root once: as --run-root or as an argument");
  fs::path root = p.positional.empty() ? p.get("run-root", "run-root") : p.positional[0];
  if (!fs::is_directory(root))
    throw InputError("run root " + quote(root.string()) + " is not a directory");
  const std::string now = utc_now_rfc3339();
  const double now_s = parse_rfc3339(now).value_or(0);

  std::vector<CampaignView> views;
  for (const auto& path : find_journals(root)) {
    CampaignView v;
    v.dir = path.parent_path();
    v.live = dispatcher::campaign_liveness(v.dir.parent_path(), now_s);
    try {
      v.states = dispatcher::fold_journal(dispatcher::Journal::read(path));
    } catch (const Error&) {
      std::error_code ec;
      if (!fs::exists(path, ec)) continue;  // removed since it was found
      throw;
    }
    views.push_back(std::move(v));
  }

  json out = {{"root", root.string()}, {"now", now}, {"campaigns", json::array()}};
  for (const auto& v : views) {
    const bool alive = v.live.state != dispatcher::Liveness::State::Dead &&
                       v.live.state != dispatcher::Liveness::State::Ended;
    size_t done = 0, errors = 0;
    long tokens = 0;
    double cost = 0, done_wall = 0;
    json list = json::array();
    for (const auto& s : v.states) {
      done += s.done();
      errors += s.failed();
      tokens += s.input_tokens + s.output_tokens;
      cost += s.cost_usd;
      if (s.done()) done_wall += dispatcher::elapsed_s(s, now, false);
      list.push_back(experiment_json(s, now, alive && !s.done() && !s.failed()));
    }
    // The ETA: the experiments still to come at the mean wall time of those done.
    json eta = nullptr;
    const size_t queued = v.live.record.is_object() ? v.live.record.value("queued", size_t{0}) : 0;
    const size_t total = std::max(queued, v.states.size());
    if (alive && done > 0 && total > done + errors)
      eta = (done_wall / static_cast<double>(done)) * static_cast<double>(total - done - errors);
    json c = {{"campaign", v.dir.filename().string()},
              {"dir", v.dir.string()},
              {"process", {{"state", dispatcher::to_string(v.live.state)}, {"why", v.live.why}}},
              {"experiments", list},
              {"totals",
               {{"experiments", total},
                {"done", done},
                {"errors", errors},
                {"tokens", tokens},
                {"cost_usd", cost}}},
              {"eta_s", eta}};
    if (v.live.record.is_object()) c["process"]["record"] = v.live.record;
    out["campaigns"].push_back(c);
  }
  if (p.has("json")) {
    std::printf("%s\n", out.dump(2).c_str());
    return kExitOk;
  }
  if (views.empty()) {
    std::printf("no campaigns under %s\n", root.c_str());
    return kExitOk;
  }
  for (size_t i = 0; i < views.size(); ++i) {
    const auto& v = views[i];
    const json& c = out["campaigns"][i];
    const json& t = c["totals"];
    std::printf("campaign %s: %s (%s); %zu experiments, %zu done, %zu errors; %ld tokens, $%.3f",
                v.dir.filename().c_str(), dispatcher::to_string(v.live.state), v.live.why.c_str(),
                t["experiments"].get<size_t>(), t["done"].get<size_t>(), t["errors"].get<size_t>(),
                t["tokens"].get<long>(), t["cost_usd"].get<double>());
    if (c["eta_s"].is_number()) std::printf("; eta %.0f s", c["eta_s"].get<double>());
    std::printf("\n");
    const char* idle = v.live.state == dispatcher::Liveness::State::Dead    ? "dead"
                       : v.live.state == dispatcher::Liveness::State::Ended ? "stopped"
                                                                            : "";
    for (const auto& s : v.states)
      std::printf("  %s\n", dispatcher::status_line(s, now, idle).c_str());
  }
  return kExitOk;
}

}  // namespace kd::cli
