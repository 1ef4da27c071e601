#include "mcp/runs.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <fstream>
#include <regex>
#include <thread>

#include "common/errors.h"
#include "common/files.h"
#include "common/policy_path.h"
#include "contract/end_reason.h"
#include "dispatcher/campaign_state.h"
#include "dispatcher/file_supervisor.h"
#include "dispatcher/journal.h"

extern char** environ;

namespace kd::mcp {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr const char* kDispatchFile = "dispatch.json";
constexpr const char* kSupervisionDir = "supervision";

// A run whose child may still change its state.
bool live(const json& status) {
  const std::string s = status.value("state", "");
  return s == "authoring" || s == "verifying" || s == "awaiting_approval";
}

// A JSON object the author session wrote, or null when it is gone (a request taken meanwhile).
json read_object_if_there(const fs::path& file) {
  std::string text;
  try {
    text = read_file(file);
  } catch (const Error&) {
    return json();
  }
  json doc = json::parse(text, nullptr, false);
  return doc.is_object() ? doc : json();  // written atomically: never torn
}

// The requests posted in a supervision folder, by call name.
std::vector<fs::path> pending_files(const fs::path& supervision) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(supervision / dispatcher::kSupervisionPending, ec))
    if (e.path().extension() == ".json" && e.path().filename().string()[0] != '.')
      out.push_back(e.path());
  return out;
}

int pidfd_open(pid_t pid) {
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
}

std::string tail_of(const fs::path& file, size_t max) {
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) return "";
  std::string text = read_file(file);
  return text.size() > max ? "..." + text.substr(text.size() - max) : text;
}

// The journal of the run's campaign (one family: one campaign directory), or empty.
fs::path journal_of(const fs::path& run) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(run / "runs", ec))
    if (fs::is_regular_file(e.path() / "journal.jsonl")) return e.path() / "journal.jsonl";
  return {};
}

}  // namespace

Runs::Runs(fs::path root, std::map<std::string, std::string> keys)
    : root_(fs::absolute(root)), keys_(std::move(keys)) {
  std::error_code ec;
  fs::create_directories(root_, ec);
  if (ec) throw Error("mkdir(" + quote(root_.string()) + "): " + ec.message());
}

Runs::~Runs() {
  // Runs outlive the server: they are journalled and a later server reads them. Reap what ended.
  std::lock_guard lock(mu_);
  for (auto& [id, c] : children_)
    reap(c);
}

fs::path Runs::run_dir(const std::string& run_id) const {
  static const std::regex id_re("[a-z0-9][a-z0-9-]*-v[0-9]{3}-[0-9]+");
  // Bounded first: libstdc++'s regex recurses per character.
  if (run_id.size() > 200 || !std::regex_match(run_id, id_re))
    throw ToolFailure{"no run " + quote(run_id.substr(0, 200))};
  fs::path dir = root_ / run_id;
  std::error_code ec;
  if (!fs::is_regular_file(dir / kDispatchFile, ec)) throw ToolFailure{"no run " + quote(run_id)};
  return dir;
}

json Runs::dispatch_record(const std::string& run_id) {
  return json::parse(read_file(run_dir(run_id) / kDispatchFile));
}

void Runs::reap(Child& c) {
  if (c.exited || c.pid < 0) return;
  int st = 0;
  pid_t r = ::waitpid(c.pid, &st, WNOHANG);
  if (r != c.pid) return;
  c.exited = true;
  c.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  c.signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
  // The pidfd stays open until the server ends: a wait may be polling it right now.
}

json Runs::redact(const json& doc) const {
  // Key values hold no quote or backslash, so replacing them in the text keeps it JSON.
  return json::parse(redact(doc.dump()));
}

std::string Runs::redact(std::string text) const {
  for (const auto& [name, value] : keys_) {
    if (value.size() < 4) continue;
    for (size_t at; (at = text.find(value)) != std::string::npos;)
      text.replace(at, value.size(), "<" + name + ">");
  }
  return text;
}

json Runs::dispatch(const DispatchSpec& spec) {
  // The id names the experiment and a number free under the root; mkdir claims it atomically.
  std::string id;
  fs::path dir;
  for (int n = 1;; ++n) {
    id = spec.family + "-" + spec.experiment + "-" + std::to_string(n);
    dir = root_ / id;
    if (::mkdir(dir.c_str(), 0755) == 0) break;
    if (errno != EEXIST) throw_sys("mkdir", quote(dir.string()), errno);
  }
  fs::create_directories(dir / "runs");
  if (spec.supervise) dispatcher::make_supervision_dir(dir / kSupervisionDir);
  // As root the boxes run as an unprivileged user, who must reach the runs.
  fs::permissions(root_, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                             fs::perms::others_read | fs::perms::others_exec);
  write_file_atomic(dir / kDispatchFile, json{{"run_id", id},
                                              {"wiki", fs::absolute(spec.wiki).string()},
                                              {"family", spec.family},
                                              {"experiment", spec.experiment},
                                              {"args", spec.run_args},
                                              {"supervise", spec.supervise}}
                                                 .dump(2) +
                                             "\n");

  std::vector<std::string> argv = {executable_path().string(),
                                   "run",
                                   "--wiki",
                                   fs::absolute(spec.wiki).string(),
                                   "--family",
                                   spec.family,
                                   "--run-root",
                                   (dir / "runs").string()};
  argv.insert(argv.end(), spec.run_args.begin(), spec.run_args.end());
  if (spec.supervise) {
    argv.push_back("--supervise-dir");
    argv.push_back((dir / kSupervisionDir).string());
  }
  std::vector<char*> cargv;
  for (auto& a : argv)
    cargv.push_back(a.data());
  cargv.push_back(nullptr);

  // The environment: the server's own, with the keys file's entries over it.
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string entry = *e;
    if (!keys_.count(entry.substr(0, entry.find('=')))) env.push_back(entry);
  }
  for (const auto& [name, value] : keys_)
    env.push_back(name + "=" + value);
  std::vector<char*> cenv;
  for (auto& e : env)
    cenv.push_back(e.data());
  cenv.push_back(nullptr);

  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&fa);
  posix_spawnattr_init(&attr);
  const std::string out = (dir / "stdout.log").string(), err = (dir / "stderr.log").string();
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  // Its own process group, so cancel reaches the campaign and everything it started; default
  // signal handling and mask whatever the server's threads do.
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, argv[0].c_str(), &fa, &attr, cargv.data(), cenv.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) throw_sys("posix_spawn", quote(argv[0]), rc);

  std::lock_guard lock(mu_);
  Child& c = children_[id];
  c.pid = pid;
  c.pidfd.reset(pidfd_open(pid));
  if (!c.pidfd) throw_sys("pidfd_open", std::to_string(pid), errno);
  ::fcntl(c.pidfd.get(), F_SETFD, FD_CLOEXEC);
  return status_locked(id);
}

json Runs::status(const std::string& run_id) {
  std::lock_guard lock(mu_);
  return status_locked(run_id);
}

json Runs::status_locked(const std::string& run_id) {
  fs::path dir = run_dir(run_id);
  json rec = json::parse(read_file(dir / kDispatchFile));
  json s = {{"run_id", run_id},
            {"family", rec["family"]},
            {"experiment", rec["experiment"]},
            {"phase", "starting"},
            {"turns", 0},
            {"cost_usd", 0.0}};
  std::optional<size_t> waiting;  // a supervised run's pending requests
  if (rec.value("supervise", false)) {
    waiting = pending_files(dir / kSupervisionDir).size();
    s["supervised"] = true;
    s["pending"] = *waiting;
  }
  std::optional<dispatcher::ExperimentState> mine;
  if (fs::path j = journal_of(dir); !j.empty()) {
    const std::string want =
        rec["family"].get<std::string>() + "/" + rec["experiment"].get<std::string>();
    for (auto& e : dispatcher::fold_journal(dispatcher::Journal::read(j)))
      if (e.experiment == want) mine = e;
  }
  if (mine) {
    s["phase"] = mine->phase;
    s["turns"] = mine->turns;
    s["cost_usd"] = mine->cost_usd;
    s["chip"] = mine->chip;
    if (!mine->verdict.empty()) s["verdict"] = mine->verdict;
    if (mine->failed())
      s["error"] = {{"cause", mine->error_cause}, {"message", mine->error_message}};
  }
  auto it = children_.find(run_id);
  bool running = false;
  if (it != children_.end()) {
    Child& c = it->second;
    reap(c);
    running = !c.exited;
    if (c.exited) {
      s["exit_code"] = c.exit_code;
      if (c.signal) s["signal"] = c.signal;
    }
    if (c.cancelled) s["cancelled"] = true;
  }
  std::string state;
  if (running && waiting.value_or(0) > 0)
    state = "awaiting_approval";  // the author waits on the supervisor: `pending`, `decide`
  else if (running)
    state = mine && mine->phase != "dispatched" && mine->phase != "author_turn" &&
                    mine->phase != "committed"
                ? "verifying"
                : "authoring";
  else if (mine && mine->done())
    state = "done";
  else if (mine && mine->failed())
    state = "error";  // the infrastructure failed, not the candidate: `dispatch` again to retry
  else if (mine && mine->finished.is_object() &&
           mine->finished.value("end_reason", "") ==
               contract::to_string(contract::EndReason::stopped()))
    state = "stopped";  // the supervising person stopped the author: no verifier, no verdict
  else if (it != children_.end() && it->second.cancelled)
    state = "cancelled";
  else if (it == children_.end())
    state = "ended";  // dispatched by an earlier server; its journal is all there is
  else
    state = "failed";
  s["state"] = state;
  if (state == "failed" || state == "error" || state == "ended" || state == "cancelled") {
    std::string why = redact(tail_of(dir / "stderr.log", 2000));
    if (!why.empty()) s["stderr_tail"] = why;
  }
  return s;
}

json Runs::status_all() {
  std::vector<std::pair<fs::file_time_type, std::string>> ids;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root_, ec))
    if (fs::is_regular_file(e.path() / kDispatchFile))
      ids.emplace_back(fs::last_write_time(e.path() / kDispatchFile), e.path().filename());
  std::sort(ids.begin(), ids.end());
  json out = json::array();
  std::lock_guard lock(mu_);
  for (const auto& [t, id] : ids)
    out.push_back(status_locked(id));
  return out;
}

json Runs::wait(const std::string& run_id, double timeout_s, int wake_fd,
                const std::function<void(const json&, double)>& heartbeat) {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  const auto deadline = t0 + std::chrono::milliseconds(static_cast<long>(timeout_s * 1000));
  json first = status(run_id);
  const fs::path dir = run_dir(run_id);
  auto key = [](const json& s) {
    return s.value("state", "") + "|" + s.value("phase", "") + "|" + s["turns"].dump() + "|" +
           s.value("pending", json()).dump();
  };
  const std::string first_key = key(first);
  auto ended = [](const json& s) { return !live(s); };
  if (ended(first)) return json{{"changed", false}, {"status", first}};

  UniqueFd in(::inotify_init1(IN_CLOEXEC | IN_NONBLOCK));
  if (!in) throw_sys("inotify_init1", "", errno);
  const uint32_t mask = IN_CREATE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO;
  // A request posted or taken: the author waits, or goes on.
  ::inotify_add_watch(in.get(), (dir / kSupervisionDir / dispatcher::kSupervisionPending).c_str(),
                      IN_MOVED_TO | IN_DELETE);
  auto watch_all = [&] {
    // Re-adding a watch is harmless; campaign folders appear once the child starts.
    ::inotify_add_watch(in.get(), (dir / "runs").c_str(), mask);
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir / "runs", ec))
      if (e.is_directory()) ::inotify_add_watch(in.get(), e.path().c_str(), mask);
  };
  watch_all();
  int pidfd = -1;
  {
    std::lock_guard lock(mu_);
    auto it = children_.find(run_id);
    if (it != children_.end() && it->second.pidfd) pidfd = it->second.pidfd.get();
  }
  auto last_beat = t0;
  for (;;) {
    json now = status(run_id);
    if (key(now) != first_key || ended(now)) return json{{"changed", true}, {"status", now}};
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now());
    if (left.count() <= 0) return json{{"changed", false}, {"status", now}};
    auto beat_in = std::chrono::duration_cast<std::chrono::milliseconds>(
        last_beat + std::chrono::seconds(10) - clock::now());
    pollfd fds[3] = {{in.get(), POLLIN, 0}, {wake_fd, POLLIN, 0}, {pidfd, POLLIN, 0}};
    int n = ::poll(fds, pidfd >= 0 ? 3 : 2,
                   static_cast<int>(std::max<long>(0, std::min(left.count(), beat_in.count()))));
    if (n < 0 && errno != EINTR) throw_sys("poll", "inotify", errno);
    if (fds[1].revents) return json{{"changed", false}, {"status", now}, {"interrupted", true}};
    if (n == 0 && clock::now() >= last_beat + std::chrono::seconds(10)) {
      last_beat = clock::now();
      heartbeat(now, std::chrono::duration<double>(last_beat - t0).count());
    }
    if (fds[0].revents) {
      char buf[4096];
      while (::read(in.get(), buf, sizeof buf) > 0) {
      }
      watch_all();
    }
    if (pidfd >= 0 && fds[2].revents) pidfd = -1;  // exited: the next status says so
  }
}

json Runs::cancel(const std::string& run_id) {
  pid_t pgid = -1;
  {
    std::lock_guard lock(mu_);
    run_dir(run_id);
    auto it = children_.find(run_id);
    if (it == children_.end())
      throw ToolFailure{"run " + quote(run_id) + " was not started by this server"};
    reap(it->second);
    if (!it->second.exited) {
      it->second.cancelled = true;
      pgid = it->second.pid;
    }
  }
  if (pgid > 0) {
    // The first signal stops new dispatches, the second stops the campaign now (cli/cmd_run.cc).
    ::kill(-pgid, SIGTERM);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ::kill(-pgid, SIGTERM);
    for (int i = 0; i < 50; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      if (!live(status(run_id))) break;
    }
    ::kill(-pgid, SIGKILL);  // harmless when the group is gone
  }
  return status(run_id);
}

json Runs::pending(const std::string& run_id) {
  const fs::path dir = run_dir(run_id);
  json list = json::array();
  for (const auto& file : pending_files(dir / kSupervisionDir)) {
    json req = read_object_if_there(file);
    if (req.is_null()) continue;
    const json refused = read_object_if_there(dir / kSupervisionDir /
                                              dispatcher::kSupervisionErrors / file.filename());
    if (refused.is_object()) req["refused_answer"] = refused.value("error", "");
    list.push_back(std::move(req));
  }
  std::sort(list.begin(), list.end(), [](const json& a, const json& b) {
    return a.value("asked_at", "") < b.value("asked_at", "");
  });
  json s = status(run_id);
  return redact(json{{"run_id", run_id}, {"state", s["state"]}, {"pending", list}});
}

json Runs::decide(const std::string& run_id, const std::string& call_id, const json& answer) {
  const fs::path dir = run_dir(run_id);
  if (!dispatch_record(run_id).value("supervise", false))
    throw ToolFailure{"run " + quote(run_id) +
                      " is not supervised (dispatch it with supervise: true)"};
  const fs::path sup = dir / kSupervisionDir;
  const std::string name = dispatcher::supervision_call_name(call_id);
  auto file = [&](const char* folder) { return sup / folder / (name + ".json"); };
  auto already = [&] {
    std::string what;
    json d = read_object_if_there(file(dispatcher::kSupervisionDecided));
    if (d.is_object() && d.contains("answer"))
      what = " (" + d["answer"].value("decision", "?") + ")";
    return ToolFailure{"request " + quote(call_id) + " of run " + quote(run_id) +
                       " was already decided" + what};
  };
  std::error_code ec;
  json request;
  if (name == call_id) request = read_object_if_there(file(dispatcher::kSupervisionPending));
  if (request.is_null()) {
    if (name == call_id && fs::is_regular_file(file(dispatcher::kSupervisionDecided), ec))
      throw already();
    std::vector<std::string> names;
    for (const auto& f : pending_files(sup))
      names.push_back(f.stem().string());
    std::sort(names.begin(), names.end());
    throw ToolFailure{
        "no request " + quote(call_id.substr(0, 200)) + " is pending in run " + quote(run_id) +
        " (pending: " + (names.empty() ? std::string("none") : json(names).dump()) + ")"};
  }
  // A run of an earlier server ("ended": no child of ours) may still be waiting: answered.
  if (json s = status(run_id); !live(s) && s["state"] != "ended")
    throw ToolFailure{"run " + quote(run_id) + " is " + s["state"].get<std::string>() +
                      ": nothing waits for a decision any more"};
  const std::string tool = request.value("tool", "");
  const size_t words = request.contains("command") ? request["command"].size() : 0;
  try {
    dispatcher::parse_supervision_answer(answer, tool, words, "decide " + name);
  } catch (const Error& e) {
    throw ToolFailure{e.what()};
  }
  if (!dispatcher::post_supervision_answer(sup, name, answer))
    throw ToolFailure{"request " + quote(call_id) + " of run " + quote(run_id) +
                      " was already decided; the author has not taken that answer yet"};
  // The request is gone: the author took this answer, or (a race of two answers) took another
  // just before this one was put in place; that late one is withdrawn.
  if (!fs::exists(file(dispatcher::kSupervisionPending), ec)) {
    json d = read_object_if_there(file(dispatcher::kSupervisionDecided));
    if (!d.is_object() || d.value("answer", json()) != answer) {
      fs::remove(file(dispatcher::kSupervisionDecisions), ec);
      throw already();
    }
  }
  return redact(json{{"run_id", run_id},
                     {"call_id", name},
                     {"tool", tool},
                     {"decision", answer["decision"]},
                     {"posted", true}});
}

fs::path Runs::experiment_dir(const std::string& run_id) {
  fs::path dir = run_dir(run_id);
  json rec = json::parse(read_file(dir / kDispatchFile));
  const std::string want =
      rec["family"].get<std::string>() + "/" + rec["experiment"].get<std::string>();
  if (fs::path j = journal_of(dir); !j.empty())
    for (const auto& e : dispatcher::fold_journal(dispatcher::Journal::read(j)))
      if (e.experiment == want && !e.run_dir.empty()) return e.run_dir;
  throw ToolFailure{"run " + quote(run_id) + " has not started its experiment yet"};
}

}  // namespace kd::mcp
