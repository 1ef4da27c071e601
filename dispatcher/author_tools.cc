#include "dispatcher/author_tools.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "common/errors.h"
#include "contract/ledger.h"
#include "dispatcher/experiment_error.h"

namespace kd::dispatcher {
namespace {

using agents::ToolOutcome;
using json = nlohmann::json;

ToolOutcome error(std::string message, json record = json::object()) {
  return {std::move(message), true, std::move(record), false};
}

// A refused file operation is a denial the sandbox observed: the model gets the error, the
// transcript a violation record.
// A refused file operation is a violation of the layer the box names (mount, landlock,
// permissions); a plain failure (no such file) is only the tool's error.
ToolOutcome file_failure(const sandbox::FileResult& r, const std::string& op,
                         const std::string& path) {
  json record = json::object();
  if (!r.denials.empty()) {
    record["violations"] = json::array();
    for (const auto& d : r.denials) {
      json v = sandbox::denial_json(d);
      v["op"] = op;
      v["path"] = path;
      record["violations"].push_back(std::move(v));
    }
  }
  return error(op + " " + path + " failed: " + r.error, std::move(record));
}

// A call the supervising person did not approve: denied (the model reads the reason) or
// stopped (the session ends).
ToolOutcome not_approved(const std::string& tool, const Decision& d) {
  std::string text = d.stop ? "not run: the supervising person stopped the session"
                            : "the supervising person denied this " + tool + " call: " + d.reason;
  ToolOutcome out = error(text + Supervisor::for_model(d), json{{"decisions", d.records}});
  out.stop = d.stop;
  return out;
}

// An approved call, run: the decisions travel with its outcome whatever it is (a failure of
// the tool included), and its notes reach the model with its result.
template <typename Run>
ToolOutcome supervised(const Decision& d, const std::string& tool, Run&& run) {
  ToolOutcome out;
  try {
    out = run();
  } catch (const Error& e) {
    out = error(tool + " failed: " + e.what());
  }
  out.content += Supervisor::for_model(d);
  out.record["decisions"] = d.records;
  return out;
}

}  // namespace

std::string describe_run(const sandbox::RunResult& r) {
  char head[160];
  if (r.signal) {
    std::snprintf(head, sizeof head, "killed by signal %d", r.signal);
  } else {
    std::snprintf(head, sizeof head, "exit %d", r.exit_code);
  }
  std::string out = head;
  out += " · " + std::to_string(static_cast<long>(r.wall_s * 1000)) + " ms";
  if (r.timed_out) out += " · timed out";
  if (r.killed_by_limit) out += " · killed by the " + r.limit + " limit";
  out += "\n--- stdout ---\n" + r.out + (r.out_truncated ? "\n[stdout cut at the output cap]" : "");
  out += "\n--- stderr ---\n" + r.err + (r.err_truncated ? "\n[stderr cut at the output cap]" : "");
  for (const auto& d : r.denials)
    out +=
        "\n[sandbox denied " + d.op + (d.path.empty() ? "" : " " + d.path) + ": " + d.detail + "]";
  return out;
}

std::vector<git::CommitInfo> AuthorToolHost::commits() const {
  std::lock_guard<std::mutex> lock(mu_);
  return commits_;
}

ToolOutcome AuthorToolHost::call(const agents::ToolCall& call) {
  const json& in = call.input;
  try {
    if (call.name == "read_file") return read_file(in);
    if (call.name == "list_dir") return list_dir(in);
    if (call.name == "write_file") return write_file(in);
    if (call.name == "edit_file") return edit_file(in);
    if (call.name == "run") return run(in, false, call.id);
    if (call.name == "run_on_chip") return run(in, true, call.id);
    if (call.name == "git_diff") return git_diff(in);
    if (call.name == "commit") return commit(in, call.id);
    if (call.name == "finish") return {cfg_.finish_reply, false, json::object(), true};
  } catch (const Error& e) {
    return error(call.name + " failed: " + e.what());
  }
  return error("unknown tool " + call.name);
}

ToolOutcome AuthorToolHost::read_file(const json& in) {
  std::string path = in["path"];
  size_t offset = in.value("offset", size_t{0});
  size_t limit = in.value("limit", size_t{256 << 10});
  auto r = cfg_.box->file({sandbox::FileRequest::Read, path, "", offset + limit});
  if (!r.ok) return file_failure(r, "read", path);
  std::string data = offset < r.data.size() ? r.data.substr(offset, limit) : "";
  if (r.truncated || offset + limit < r.data.size())
    data += "\n[cut: pass offset/limit to read further]";
  return {data, false, json::object(), false};
}

ToolOutcome AuthorToolHost::list_dir(const json& in) {
  std::string path = in["path"];
  auto r = cfg_.box->file({sandbox::FileRequest::List, path, "", 0});
  if (!r.ok) return file_failure(r, "list", path);
  std::string out;
  for (const auto& [name, type] : r.entries)
    out += std::string(1, type) + " " + name + "\n";
  return {out.empty() ? "(empty)" : out, false, json::object(), false};
}

ToolOutcome AuthorToolHost::write_file(const json& in) {
  std::string path = in["path"];
  std::string content = in["content"];
  auto r = cfg_.box->file({sandbox::FileRequest::Write, path, content, 0});
  if (!r.ok) return file_failure(r, "write", path);
  return {"wrote " + std::to_string(content.size()) + " bytes to " + path, false, json::object(),
          false};
}

ToolOutcome AuthorToolHost::edit_file(const json& in) {
  std::string path = in["path"];
  std::string old_text = in["old_text"], new_text = in["new_text"];
  auto r = cfg_.box->file({sandbox::FileRequest::Read, path, "", 64 << 20});
  if (!r.ok) return file_failure(r, "read", path);
  size_t at = r.data.find(old_text);
  if (at == std::string::npos) return error("old_text does not occur in " + path);
  if (r.data.find(old_text, at + 1) != std::string::npos) {
    return error("old_text occurs more than once in " + path +
                 "; include surrounding lines to make it unique");
  }
  std::string content = r.data.substr(0, at) + new_text + r.data.substr(at + old_text.size());
  auto w = cfg_.box->file({sandbox::FileRequest::Write, path, content, 0});
  if (!w.ok) return file_failure(w, "write", path);
  return {"edited " + path, false, json::object(), false};
}

ToolOutcome AuthorToolHost::run(const json& in, bool on_chip, const std::string& call_id) {
  sandbox::RunRequest req;
  for (const auto& a : in["command"])
    req.argv.push_back(a.get<std::string>());
  req.cwd = in.value("cwd", "");
  req.timeout_s = in.value("timeout_s", 600);
  req.use_chip = on_chip;
  req.env = cfg_.env;
  const std::string tool = on_chip ? "run_on_chip" : "run";
  if (!cfg_.supervisor) return run_approved(req, call_id);
  const Decision decision = cfg_.supervisor->decide({tool, call_id, req.argv, ""});
  if (!decision.approved) return not_approved(tool, decision);
  return supervised(decision, tool, [&] { return run_approved(req, call_id); });
}

ToolOutcome AuthorToolHost::run_approved(const sandbox::RunRequest& req,
                                         const std::string& call_id) {
  sandbox::RunResult r;
  std::string chip;  // the chip a Slurm job got
  if (req.use_chip) {
    if (!cfg_.chips) return error("run_on_chip: this session has no chip");
    ChipTask task;
    task.experiment = cfg_.family + "/" + cfg_.experiment;
    task.purpose = "run_on_chip";
    task.run_dir = cfg_.run_dir;
    task.job.spec = cfg_.spec;
    task.job.request = req;
    task.call_id = call_id;
    task.record = cfg_.record;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto& prior = cfg_.jobs_in_flight;
      auto it = std::find_if(prior.begin(), prior.end(), [&](const json& j) {
        return j.value("call_id", "") == call_id && j.value("argv", json()) == json(req.argv);
      });
      if (it != prior.end()) {
        task.in_flight.push_back(*it);
        prior.erase(it);
      }
    }
    // What the local backend needs (a Slurm backend has no use for them). Blocking is fine:
    // tool calls run on the tool pool, never on the I/O thread.
    task.session_box = cfg_.box;
    task.candidates = {cfg_.chip};
    task.deadline = std::chrono::steady_clock::now() +
                    std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                        std::chrono::duration<double>(cfg_.chip_wait_s));
    try {
      verify::ChipRun run = cfg_.chips->run(task, [](const std::string&) {});
      r = std::move(run.result);
      if (cfg_.chips->is_slurm()) chip = run.chip;
    } catch (const ExperimentError& e) {
      return error(e.what());
    }
  } else {
    r = cfg_.box->run(req);
  }
  json record = {{"exit_code", r.exit_code},
                 {"signal", r.signal},
                 {"timed_out", r.timed_out},
                 {"killed_by_limit", r.killed_by_limit},
                 {"wall_s", r.wall_s}};
  if (!r.denials.empty()) {
    record["violations"] = json::array();
    for (const auto& d : r.denials)
      record["violations"].push_back(sandbox::denial_json(d));
  }
  bool failed = r.exit_code != 0 || r.signal != 0 || r.timed_out;
  if (chip.empty()) return {describe_run(r), failed, std::move(record), false};
  record["chip"] = chip;
  return {"chip " + chip + " (Slurm)\n" + describe_run(r), failed, std::move(record), false};
}

ToolOutcome AuthorToolHost::git_diff(const json& in) {
  std::string diff = git::diff_worktree(cfg_.worktree, 256 << 10, in.value("path", ""));
  return {diff.empty() ? "(no uncommitted changes)" : diff, false, json::object(), false};
}

ToolOutcome AuthorToolHost::commit(const json& in, const std::string& call_id) {
  std::string message = in["message"];
  contract::CommitSubject subject;
  if (!contract::parse_commit_subject(message, &subject)) {
    return error(
        "the subject must match ^cand[0-9]+\\([a-z0-9-]+ v[0-9]{3}\\): .+ — .+ (note the em dash), "
        "e.g. cand1(" +
        cfg_.family + " " + cfg_.experiment +
        "): fused single pass — p50 0.41 ms, 1.3x, parity ok");
  }
  if (subject.family != cfg_.family || subject.experiment != cfg_.experiment) {
    return error("the subject names " + subject.family + " " + subject.experiment +
                 "; this experiment is " + cfg_.family + " " + cfg_.experiment);
  }
  std::vector<std::string> paths;
  for (const auto& p : in.value("paths", json::array()))
    paths.push_back(p.get<std::string>());
  if (!cfg_.supervisor) return commit_approved(message, subject.candidate, paths);
  const Decision decision = cfg_.supervisor->decide({"commit", call_id, {}, message});
  if (!decision.approved) return not_approved("commit", decision);
  return supervised(decision, "commit",
                    [&] { return commit_approved(message, subject.candidate, paths); });
}

ToolOutcome AuthorToolHost::commit_approved(const std::string& message,
                                            const std::string& candidate,
                                            const std::vector<std::string>& paths) {
  // Every candidate commit carries the experiment footer, so the final one does too.
  std::string full = message;
  if (!contract::has_exp_footer(full))
    full += "\n\nexp: " + cfg_.family + " " + cfg_.experiment + "\n";
  {
    // A call replayed after a resume (its turn was re-asked): the commit exists already, and a
    // second one of the same candidate is never made.
    std::lock_guard<std::mutex> lock(mu_);
    if (!commits_.empty() && commits_.back().message == full &&
        git::diff_worktree(cfg_.worktree, 1).empty()) {
      json content = {{"sha", commits_.back().sha}, {"branch", cfg_.branch}};
      return {content.dump(), false, json{{"sha", commits_.back().sha}, {"replayed", true}}, false};
    }
  }
  git::CommitInfo c = git::commit_all(cfg_.worktree, cfg_.gitdir, cfg_.branch, full, paths);
  if (cfg_.on_commit) cfg_.on_commit(c, candidate);
  {
    std::lock_guard<std::mutex> lock(mu_);
    commits_.push_back(c);
  }
  json content = {{"sha", c.sha}, {"branch", cfg_.branch}};
  return {content.dump(), false, json{{"sha", c.sha}}, false};
}

}  // namespace kd::dispatcher
