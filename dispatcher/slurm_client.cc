#include "dispatcher/slurm_client.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "common/errors.h"
#include "common/json_read.h"
#include "common/subprocess.h"
#include "common/text.h"

namespace kd::dispatcher::slurm {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Slurm's stderr on one line for a message: its lines joined with "; ".
std::string one_line(std::string_view text) {
  std::string out;
  std::istringstream in{std::string(trim(text))};
  for (std::string line; std::getline(in, line);) {
    std::string_view t = trim(line);
    if (t.empty()) continue;
    if (!out.empty()) out += "; ";
    out += t;
  }
  return out;
}

// "gpu:tpu:1(IDX:2)" -> "2"; "" when the text has no index.
std::string gres_index_of(std::string_view gres) {
  auto at = gres.find("(IDX:");
  if (at == std::string_view::npos) return "";
  gres.remove_prefix(at + 5);
  std::string idx(gres.substr(0, gres.find(')')));
  return idx == "N/A" ? "" : idx;
}

// scontrol and jobcomp write "(null)" or "None assigned" for an absent value.
std::string present(const std::map<std::string, std::string>& f, const std::string& key) {
  auto it = f.find(key);
  if (it == f.end() || it->second == "(null)" || it->second == "None assigned") return "";
  return it->second;
}

// "gpu:tpu:4(S:0-1),gpu:2" -> {"gpu:tpu": 4, "gpu": 2}; "(null)" -> {}.
std::map<std::string, int> parse_gres_counts(const std::string& text) {
  std::map<std::string, int> out;
  std::string item;
  int depth = 0;
  auto flush = [&] {
    std::string_view t = trim(item);
    auto colon = t.rfind(':');
    if (colon != std::string_view::npos) {
      std::string count(t.substr(colon + 1));
      if (all_digits(count)) out[std::string(t.substr(0, colon))] += std::stoi(count);
    }
    item.clear();
  };
  for (char c : text) {
    if (c == '(') ++depth;
    if (depth == 0 && c == ',') {
      flush();
      continue;
    }
    if (depth == 0) item += c;
    if (c == ')' && depth > 0) --depth;
  }
  flush();
  return out;
}

}  // namespace

const char* to_string(Phase phase) {
  switch (phase) {
    case Phase::Pending:
      return "pending";
    case Phase::Running:
      return "running";
    case Phase::Succeeded:
      return "succeeded";
    case Phase::Failed:
      return "failed";
    case Phase::Unknown:
      return "unknown";
  }
  return "unknown";
}

bool is_final(Phase p) {
  return p == Phase::Succeeded || p == Phase::Failed || p == Phase::Unknown;
}

Phase phase_of_state(const std::string& state) {
  static const std::set<std::string> failed = {
      "FAILED",        "CANCELLED", "TIMEOUT",  "NODE_FAIL", "PREEMPTED",
      "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE", "REVOKED",   "SPECIAL_EXIT"};
  static const std::set<std::string> running = {"RUNNING",  "COMPLETING", "SUSPENDED",
                                                "STOPPED",  "SIGNALING",  "STAGE_OUT",
                                                "RESIZING", "UPDATE_DB"};
  if (state == "COMPLETED") return Phase::Succeeded;
  if (failed.count(state)) return Phase::Failed;
  if (running.count(state)) return Phase::Running;
  // PENDING, CONFIGURING, REQUEUED, REQUEUE_HOLD, RESV_DEL_HOLD, and any word a later Slurm adds:
  // not finished, so waited on.
  return Phase::Pending;
}

std::map<std::string, JobStatus> parse_squeue_json(const std::string& text) {
  json doc = parse_json_document(text, "squeue --json");
  if (!doc.is_object() || !doc.contains("jobs") || !doc["jobs"].is_array())
    throw Error("squeue --json: no \"jobs\" array in its output");
  std::map<std::string, JobStatus> out;
  for (const json& j : doc["jobs"]) {
    if (!j.is_object() || !j.contains("job_id") || !j["job_id"].is_number_unsigned()) continue;
    JobStatus s;
    s.id = std::to_string(j["job_id"].get<std::uint64_t>());
    s.state = j.value("job_state", "");
    s.phase = phase_of_state(s.state);
    s.node = j.value("nodes", "");
    s.reason = j.value("state_reason", "");
    if (j.contains("gres_detail") && j["gres_detail"].is_array())
      for (const json& g : j["gres_detail"])
        if (g.is_string() && s.gres_index.empty())
          s.gres_index = gres_index_of(g.get<std::string>());
    // v0.0.38's exit_code is the raw wait status: 768 is exit 3, 9 is SIGKILL.
    if (s.phase == Phase::Succeeded || s.phase == Phase::Failed) {
      int raw = j.contains("exit_code") && j["exit_code"].is_number_integer()
                    ? j["exit_code"].get<int>()
                    : 0;
      s.exit_code = (raw >> 8) & 0xff;
      s.signal = raw & 0x7f;
    }
    out[s.id] = std::move(s);
  }
  return out;
}

std::map<std::string, std::string> parse_key_values(const std::string& line) {
  std::map<std::string, std::string> out;
  std::string* last = nullptr;
  std::istringstream in(line);
  for (std::string word; in >> word;) {
    auto eq = word.find('=');
    if (eq == std::string::npos || eq == 0) {
      if (last) *last += " " + word;
      continue;
    }
    last = &(out[word.substr(0, eq)] = word.substr(eq + 1));
  }
  return out;
}

JobStatus status_from_key_values(const std::map<std::string, std::string>& f) {
  JobStatus s;
  s.id = present(f, "JobId");
  s.state = present(f, "JobState");
  s.phase = s.state.empty() ? Phase::Unknown : phase_of_state(s.state);
  s.node = present(f, "NodeList");
  s.reason = present(f, "Reason");
  s.gres_index = gres_index_of(present(f, "GRES"));
  if (s.phase == Phase::Succeeded || s.phase == Phase::Failed) {
    std::string ec = present(f, "ExitCode");  // "3:0": exit code, signal
    auto colon = ec.find(':');
    try {
      s.exit_code = std::stoi(ec.substr(0, colon));
      if (colon != std::string::npos) s.signal = std::stoi(ec.substr(colon + 1));
    } catch (const std::exception&) {
      s.exit_code = -1;
    }
  }
  return s;
}

Client::Client(ClientOptions options) : options_(std::move(options)) {}

Client::Output Client::run(const std::vector<std::string>& argv, const std::string& about,
                           bool may_fail, bool slurm_env_only) {
  // The command as typed, shortened: its first words name it; the rest is in `about`.
  std::string what = argv[0];
  for (size_t i = 1; i < argv.size() && i < 4; ++i)
    what += " " + argv[i];
  if (argv.size() > 4) what += " ...";
  if (!about.empty()) what += " (" + about + ")";
  CommandOptions o;
  o.env = options_.env;
  if (slurm_env_only) {
    // PATH and the Slurm client's variables, from kdispatch's environment and the inventory's.
    auto slurm_variable = [](std::string_view name) {
      return name == "PATH" || name.rfind("SLURM_", 0) == 0 || name.rfind("SBATCH_", 0) == 0;
    };
    std::erase_if(o.env, [&](const auto& kv) { return !slurm_variable(kv.first); });
    o.inherit_if = slurm_variable;
  }
  o.deadline = options_.command_deadline;
  CommandResult r = run_command(argv, o);
  if (r.timed_out)
    throw Error(what + ": no answer within " + std::to_string(options_.command_deadline.count()) +
                " ms (is slurmctld up and SLURM_CONF right?)" +
                (r.err.empty() ? "" : ": " + one_line(r.err)));
  if (r.exit_code != 0 && !may_fail)
    throw Error(what + ": " +
                (r.signal ? "killed by signal " + std::to_string(r.signal)
                          : "exit " + std::to_string(r.exit_code)) +
                (r.err.empty() ? "" : ": " + one_line(r.err)));
  return {r.exit_code, std::move(r.out), std::move(r.err)};
}

std::string Client::submit(const SubmitRequest& req) {
  if (req.script.empty()) throw Error("sbatch: no batch script given");
  // --export=ALL of sbatch's environment, PATH and the Slurm variables alone: nothing else of
  // kdispatch's, so no API key, reaches sbatch or the job. Not --export=NONE: the node would then
  // load the user's login environment (`su - USER -c env`) before each job, half a second on a
  // quiet host.
  std::vector<std::string> argv = {"sbatch", "--parsable", "--export=ALL", "--no-requeue"};
  if (!req.name.empty()) argv.push_back("--job-name=" + req.name);
  if (!req.partition.empty()) argv.push_back("--partition=" + req.partition);
  if (!req.gres.empty()) argv.push_back("--gres=" + req.gres);
  if (!req.output.empty()) argv.push_back("--output=" + req.output.string());
  if (!req.chdir.empty()) argv.push_back("--chdir=" + req.chdir.string());
  if (req.time_limit_minutes) argv.push_back("--time=" + std::to_string(*req.time_limit_minutes));
  argv.insert(argv.end(), req.extra_args.begin(), req.extra_args.end());
  argv.push_back(req.script.string());
  std::string about = "script " + quote(req.script.string());
  if (!req.partition.empty()) about += ", partition " + quote(req.partition);
  if (!req.gres.empty()) about += ", gres " + quote(req.gres);
  Output r = run(argv, about, false, /*slurm_env_only=*/true);
  // --parsable: "<id>" or "<id>;<cluster>".
  std::string out(trim(r.out));
  std::string id = out.substr(0, out.find(';'));
  if (!all_digits(id)) throw Error("sbatch (" + about + "): no job id in its output " + quote(out));
  return id;
}

std::optional<fs::path> Client::jobcomp_file() {
  std::lock_guard lock(jobcomp_mu_);
  if (jobcomp_known_) return jobcomp_;
  Output r = run({"scontrol", "show", "config"}, "");
  std::string type, loc;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string key(trim(std::string_view(line).substr(0, eq)));
    std::string value(trim(std::string_view(line).substr(eq + 1)));
    if (key == "JobCompType") type = value;
    if (key == "JobCompLoc") loc = value;
  }
  if (type == "jobcomp/filetxt" && !loc.empty() && loc[0] == '/') jobcomp_ = fs::path(loc);
  jobcomp_known_ = true;
  return jobcomp_;
}

std::map<std::string, JobStatus> Client::query(const std::vector<std::string>& ids) {
  std::map<std::string, JobStatus> out;
  if (ids.empty()) return out;
  std::map<std::string, JobStatus> listed = parse_squeue_json(run({"squeue", "--json"}, "").out);
  std::vector<std::string> missing;
  for (const auto& id : ids) {
    auto it = listed.find(id);
    if (it != listed.end())
      out[id] = it->second;
    else
      missing.push_back(id);
  }
  // Forgotten by squeue (older than MinJobAge): scontrol may still have it, jobcomp keeps it.
  std::vector<std::string> still_missing;
  for (const auto& id : missing) {
    Output r = run({"scontrol", "show", "job", "-d", "-o", id}, "job " + id, true);
    JobStatus s;
    if (r.exit_code == 0) s = status_from_key_values(parse_key_values(r.out));
    if (s.id == id && !s.state.empty())
      out[id] = s;
    else
      still_missing.push_back(id);
  }
  if (still_missing.empty()) return out;
  std::map<std::string, JobStatus> from_file;
  if (auto file = jobcomp_file()) {
    std::ifstream in(*file);
    std::set<std::string> wanted(still_missing.begin(), still_missing.end());
    // The last line of an id wins: a restarted cluster's state dir may reuse ids.
    for (std::string line; std::getline(in, line);) {
      if (!starts_with(line, "JobId=")) continue;
      std::string id = line.substr(6, line.find(' ') - 6);
      if (wanted.count(id)) from_file[id] = status_from_key_values(parse_key_values(line));
    }
  }
  for (const auto& id : still_missing) {
    auto it = from_file.find(id);
    if (it != from_file.end()) {
      out[id] = it->second;
    } else {
      JobStatus unknown;
      unknown.id = id;
      out[id] = unknown;
    }
  }
  return out;
}

void Client::cancel(const std::vector<std::string>& ids) {
  if (ids.empty()) return;
  std::vector<std::string> argv = {"scancel"};
  argv.insert(argv.end(), ids.begin(), ids.end());
  Output r = run(argv, "", true);
  if (r.exit_code == 0) return;
  // An id Slurm no longer knows, or a job already finished, is what cancel wants anyway.
  std::istringstream in(r.err);
  for (std::string line; std::getline(in, line);) {
    if (trim(line).empty()) continue;
    if (line.find("Invalid job id") != std::string::npos) continue;
    if (line.find("already completed") != std::string::npos) continue;
    throw Error("scancel " + ids.front() + (ids.size() > 1 ? " ..." : "") + ": exit " +
                std::to_string(r.exit_code) + ": " + one_line(r.err));
  }
}

Client::Partition Client::partition(const std::string& name) {
  json doc = parse_json_document(run({"sinfo", "--json"}, "").out, "sinfo --json");
  if (!doc.is_object() || !doc.contains("nodes") || !doc["nodes"].is_array())
    throw Error("sinfo --json: no \"nodes\" array in its output");
  Partition p;
  p.name = name;
  bool first = true;
  for (const json& n : doc["nodes"]) {
    if (!n.is_object() || !n.contains("partitions") || !n["partitions"].is_array()) continue;
    bool member = false;
    for (const json& part : n["partitions"])
      if (part.is_string() && part.get<std::string>() == name) member = true;
    if (!member) continue;
    ++p.nodes;
    std::map<std::string, int> gres = parse_gres_counts(n.value("gres", ""));
    if (first) {
      p.gres_per_node = gres;
      first = false;
      continue;
    }
    // What every node has: a kind missing on one node is dropped, counts are the minimum.
    for (auto it = p.gres_per_node.begin(); it != p.gres_per_node.end();) {
      auto g = gres.find(it->first);
      if (g == gres.end()) {
        it = p.gres_per_node.erase(it);
      } else {
        it->second = std::min(it->second, g->second);
        ++it;
      }
    }
  }
  if (p.nodes == 0)
    throw Error("sinfo --json: no partition " + quote(name) + " with nodes in this cluster");
  return p;
}

Watcher::Watcher(Client& client, std::chrono::milliseconds interval)
    : client_(client), interval_(interval) {
  thread_ = std::thread([this] { poll_loop(); });
}

Watcher::~Watcher() {
  stop();
  if (thread_.joinable()) thread_.join();
}

void Watcher::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  poll_cv_.notify_all();
  waiters_cv_.notify_all();
}

std::uint64_t Watcher::polls() const {
  std::lock_guard lock(mu_);
  return polls_;
}

std::string Watcher::last_error() const {
  std::lock_guard lock(mu_);
  return last_error_;
}

std::optional<JobStatus> Watcher::wait(
    const std::string& id, std::optional<std::chrono::steady_clock::time_point> deadline,
    const fs::path& done_file, bool until_done_file) {
  std::unique_lock lock(mu_);
  if (stopping_) return std::nullopt;
  // The entry stays while this waiter holds a count on it, so the reference stays valid.
  Watched& w = watched_[id];
  ++w.waiters;
  if (!done_file.empty()) w.done_file = done_file;
  ++joined_;
  poll_cv_.notify_one();
  auto done = [&] {
    return stopping_ || w.final.has_value() || (until_done_file && w.done_seen.has_value());
  };
  if (deadline)
    waiters_cv_.wait_until(lock, *deadline, done);
  else
    waiters_cv_.wait(lock, done);
  std::optional<JobStatus> result = w.final;
  if (!result && until_done_file && w.done_seen)
    result = w.last.value_or(JobStatus{id, "", Phase::Running, -1, 0, "", "", ""});
  if (--w.waiters == 0) watched_.erase(id);
  return result;
}

bool Watcher::notice_done_files(std::unique_lock<std::mutex>& lock) {
  std::vector<std::pair<std::string, fs::path>> look;
  for (const auto& [id, w] : watched_)
    if (w.awaits_done_file()) look.emplace_back(id, w.done_file);
  if (look.empty()) return false;
  // Unlocked: a slow file system holds up this thread, never the waiters.
  lock.unlock();
  std::vector<std::string> appeared;
  for (const auto& [id, path] : look) {
    std::error_code ec;
    if (fs::exists(path, ec)) appeared.push_back(id);
  }
  lock.lock();
  const auto now = std::chrono::steady_clock::now();
  bool seen = false;
  for (const auto& id : appeared)
    if (auto it = watched_.find(id); it != watched_.end() && !it->second.final) {
      it->second.done_seen = now;
      seen = true;
    }
  if (seen) waiters_cv_.notify_all();  // those waiting only for the file
  return seen;
}

void Watcher::poll_loop() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    std::vector<std::string> ids;
    for (const auto& [id, w] : watched_)
      if (!w.final) ids.push_back(id);
    if (ids.empty()) {
      poll_cv_.wait(lock);  // nothing to watch: no polling until a waiter comes, or stop()
      continue;
    }
    lock.unlock();
    std::map<std::string, JobStatus> got;
    std::string error;
    try {
      got = client_.query(ids);
    } catch (const std::exception& e) {
      error = e.what();
    }
    lock.lock();
    ++polls_;
    last_error_ = error;
    bool finished = false;
    for (auto& [id, status] : got) {
      auto it = watched_.find(id);
      if (it == watched_.end() || it->second.final) continue;
      if (!is_final(status.phase)) {
        it->second.last = std::move(status);
        continue;
      }
      it->second.final = std::move(status);
      finished = true;
    }
    if (finished) waiters_cv_.notify_all();
    // Until the next poll: a stat of each done file every kDoneFileCheck, whose appearance (or
    // a job that wrote it but was still ending at this poll) brings the poll forward.
    const auto now = std::chrono::steady_clock::now();
    bool ending = false;
    for (const auto& [id, w] : watched_)
      ending = ending || (w.done_seen && !w.final && now - *w.done_seen < kEndingWindow);
    const auto next = now + (ending ? 2 * kDoneFileCheck : interval_);
    while (!stopping_ && std::chrono::steady_clock::now() < next && !notice_done_files(lock)) {
      const bool looking = std::any_of(watched_.begin(), watched_.end(),
                                       [](const auto& e) { return e.second.awaits_done_file(); });
      // A waiter that comes meanwhile has its done file looked for from now, not next poll.
      const std::uint64_t joined = joined_;
      poll_cv_.wait_until(
          lock, looking ? std::min(next, std::chrono::steady_clock::now() + kDoneFileCheck) : next,
          [&] { return stopping_ || joined_ != joined; });
    }
  }
}

}  // namespace kd::dispatcher::slurm
