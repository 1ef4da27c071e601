#include "sandbox/box.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>

#include "common/errors.h"
#include "common/fd.h"
#include "sandbox/box_init.h"
#include "sandbox/box_program.h"
#include "sandbox/cgroup.h"
#include "sandbox/env_scrub.h"
#include "sandbox/fds.h"
#include "sandbox/landlock.h"
#include "sandbox/seccomp_filter.h"
#include "sandbox/seccomp_notify.h"
#include "sandbox/wire.h"

extern char** environ;

namespace kd::sandbox {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
constexpr std::chrono::seconds kStartupTimeout{20};
// How long past a call's own deadline pid 1 may take to kill, reap and report before the box is
// taken for broken.
constexpr std::chrono::seconds kAnswerGrace{30};

Clock::time_point answer_deadline(Clock::time_point start, double timeout_s) {
  return start + milliseconds(uint64_t(timeout_s * 1000)) + kAnswerGrace;
}

fs::path existing_dir(const fs::path& p, const std::string& what) {
  std::error_code ec;
  fs::path c = fs::canonical(p, ec);
  if (ec) throw Error(what + " " + quote(p.string()) + ": " + ec.message());
  if (!fs::is_directory(c)) throw Error(what + " " + quote(p.string()) + " is not a directory");
  return c;
}

// A declared path inside one of the box's writable trees (`writable`, resolved) is resolved
// beneath that tree component by component, refusing a symbolic link anywhere on the way: the
// author made everything there, and a renamed parent replaced by a link must not move a bind
// onto a host file. Any other path is the host's own: its parent is resolved, and a link at the
// last component is refused instead of followed. nullopt: the path does not exist.
std::optional<fs::path> declared_path(const fs::path& p, const std::string& what,
                                      const std::vector<fs::path>& writable) {
  if (!p.is_absolute()) throw Error(what + " " + quote(p.string()) + " must be an absolute path");
  for (const auto& root : writable) {
    const fs::path in = p.lexically_normal();
    std::error_code ec;
    const fs::path canonical_root = fs::canonical(root, ec);
    const fs::path rel_given = in.lexically_relative(root.lexically_normal());
    if (rel_given.empty() || *rel_given.begin() == "..") continue;
    if (ec)
      throw Error(what + " " + quote(p.string()) + ": " + quote(root.string()) + ": " +
                  ec.message());
    const UniqueFd dir(::open(canonical_root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!dir) throw_sys("open", quote(canonical_root.string()), errno);
    open_how how{};
    how.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    const long fd = ::syscall(SYS_openat2, dir.get(), rel_given.c_str(), &how, sizeof how);
    if (fd < 0 && errno == ENOENT) return std::nullopt;
    if (fd < 0) {
      throw_sys("openat2",
                what + " " + quote(rel_given.string()) + " beneath " + quote(root.string()) +
                    ", RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS (a symbolic "
                    "link or a way out on the path is refused)",
                errno);
    }
    const UniqueFd found{int(fd)};
    struct stat st;
    if (::fstat(found.get(), &st) != 0) throw_sys("fstat", what + " " + p.string(), errno);
    if (S_ISLNK(st.st_mode)) throw Error(what + " " + quote(p.string()) + " is a symbolic link");
    return canonical_root / rel_given;
  }
  std::error_code ec;
  fs::path parent = fs::canonical(p.parent_path(), ec);
  if (ec) return std::nullopt;
  fs::path full = parent / p.filename();
  struct stat st;
  if (::lstat(full.c_str(), &st) != 0) {
    if (errno == ENOENT) return std::nullopt;
    throw_sys("lstat", what + " " + full.string(), errno);
  }
  if (S_ISLNK(st.st_mode)) throw Error(what + " " + quote(full.string()) + " is a symbolic link");
  return full;
}

void set_nonblock(int fd) {
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
}

// Appends what is readable; false at end of stream.
bool drain(int fd, std::string& into, uint64_t cap, bool& truncated) {
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      size_t room = into.size() < cap ? size_t(cap - into.size()) : 0;
      into.append(buf, std::min(room, size_t(n)));
      if (size_t(n) > room) truncated = true;
      continue;
    }
    if (n == 0) return false;
    if (errno == EINTR) continue;
    return errno == EAGAIN;
  }
}

struct Exchange {
  std::vector<std::pair<wire::Frame, std::string>> frames;
  std::string out, err;
  bool out_truncated = false, err_truncated = false;
};

// The host's ends of one call's streams; a closed or absent one is invalid.
struct Streams {
  UniqueFd reply, in, out, err;
};

// Splits the complete frames off `buffer`; true when one of them ends the exchange (the
// command's or pid 1's status, a file result).
bool take_frames(std::string& buffer, Exchange& ex) {
  bool final_frame = false;
  wire::Frame type;
  std::string payload;
  while (wire::next_frame(buffer, type, payload)) {
    final_frame = final_frame || type == wire::Frame::CommandStatus ||
                  type == wire::Frame::Status || type == wire::Frame::FileResult;
    ex.frames.emplace_back(type, std::move(payload));
  }
  return final_frame;
}

// Sends what the stream takes now; closes it when all is sent or the reader is gone.
void feed(UniqueFd& in, const std::string& data, size_t& off) {
  ssize_t n = ::send(in.get(), data.data() + off, data.size() - off, MSG_NOSIGNAL);
  if (n > 0) off += size_t(n);
  if ((n < 0 && errno != EAGAIN && errno != EINTR) || off == data.size()) in.reset();
}

// Feeds stdin and collects output and reply frames until every stream has ended.
Exchange pump(Streams s, const std::string& stdin_data, uint64_t cap, Clock::time_point give_up) {
  Exchange ex;
  std::string reply_buf;
  bool reply_truncated = false;
  size_t in_off = 0;
  for (const UniqueFd* fd : {&s.reply, &s.in, &s.out, &s.err}) {
    if (fd->valid()) set_nonblock(fd->get());
  }
  if (stdin_data.empty()) s.in.reset();
  // The exchange ends at its last frame once the command's streams are closed; pid 1 may still
  // be reaping the command's init.
  bool final_frame = false;
  while ((s.reply && !final_frame) || s.out || s.err) {
    pollfd pfd[4] = {{s.reply.get(), POLLIN, 0},
                     {s.out.get(), POLLIN, 0},
                     {s.err.get(), POLLIN, 0},
                     {s.in.get(), POLLOUT, 0}};
    const auto left = std::chrono::duration_cast<milliseconds>(give_up - Clock::now()).count();
    if (left <= 0) throw Error("box: no answer from the box's pid 1 before the deadline");
    if (::poll(pfd, 4, int(std::min<long>(left, 1000))) < 0 && errno != EINTR) {
      throw_sys("box: poll", "command streams", errno);
    }
    if (pfd[0].revents) {
      if (!drain(s.reply.get(), reply_buf, uint64_t(1) << 34, reply_truncated)) s.reply.reset();
      final_frame = take_frames(reply_buf, ex) || final_frame;
    }
    if (pfd[1].revents && !drain(s.out.get(), ex.out, cap, ex.out_truncated)) s.out.reset();
    if (pfd[2].revents && !drain(s.err.get(), ex.err, cap, ex.err_truncated)) s.err.reset();
    if (s.in && pfd[3].revents) feed(s.in, stdin_data, in_off);
  }
  return ex;
}

// The command's streams, its wait status and the denials its supervisor reported, from the
// frames of one exchange. Throws the error of a setup that failed, or when no status came.
RunResult result_of(Exchange ex, bool seccomp_observed) {
  RunResult r;
  r.out = std::move(ex.out);
  r.err = std::move(ex.err);
  r.out_truncated = ex.out_truncated;
  r.err_truncated = ex.err_truncated;
  r.unobserved_layers = {"mount", "landlock"};
  if (!seccomp_observed) r.unobserved_layers.push_back("seccomp");
  bool have_status = false, have_command_status = false;
  int status = 0;
  for (const auto& [type, payload] : ex.frames) {
    if (type == wire::Frame::SetupError) throw Error(payload);
    wire::Reader rd(payload);
    if (type == wire::Frame::Denials) {
      for (auto& d : DenialLog::decode(payload))
        r.denials.push_back(std::move(d));
    } else if (type == wire::Frame::CommandStatus) {
      status = int(rd.u64());
      have_command_status = true;
    } else if (type == wire::Frame::Status) {
      const int init_status = int(rd.u64());
      r.timed_out = rd.u64() != 0;
      if (!have_command_status) status = init_status;  // killed before the command ended
      have_status = true;
    }
  }
  if (!have_status && !have_command_status) {
    throw Error("box: the box's pid 1 died before reporting the command's status");
  }
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  return r;
}

// The deadline and the rlimits, told by how the command ended.
void add_limit_denials(RunResult& r, double timeout_s) {
  if (r.timed_out) {
    r.denials.push_back(
        {"timeout", "run", "", "killed after " + std::to_string(timeout_s) + " s of wall time", 0});
  }
  if (r.signal == SIGXCPU) {
    r.killed_by_limit = true;
    r.limit = "cpu";
    r.denials.push_back({"rlimit", "run", "", "RLIMIT_CPU reached", 0});
  } else if (r.signal == SIGXFSZ) {
    r.killed_by_limit = true;
    r.limit = "fsize";
    r.denials.push_back({"rlimit", "write", "", "RLIMIT_FSIZE reached", EFBIG});
  }
}

struct CgroupCounts {
  uint64_t oom_kills = 0, pids_max_hits = 0;
};

CgroupCounts counts(const Cgroup* cgroup) {
  if (!cgroup) return {};
  return {cgroup->oom_kills(), cgroup->pids_max_hits()};
}

// The box's cgroup counts its limits' hits: those since `before` happened during the call.
void add_cgroup_denials(RunResult& r, const Cgroup* cgroup, CgroupCounts before) {
  if (!cgroup) return;
  const CgroupCounts now = counts(cgroup);
  if (now.oom_kills > before.oom_kills) {
    r.killed_by_limit = r.killed_by_limit || r.signal == SIGKILL;
    if (r.limit.empty()) r.limit = "memory";
    r.denials.push_back(
        {"cgroup", "alloc", "", "memory limit reached; a process was killed", ENOMEM});
  }
  if (now.pids_max_hits > before.pids_max_hits) {
    r.denials.push_back({"cgroup", "fork", "",
                         "pids.max (" + std::to_string(cgroup->pids_limit()) + ") reached",
                         EAGAIN});
  }
}

void add_output_denials(RunResult& r, uint64_t cap) {
  for (const auto& [trunc, name] :
       {std::pair{r.out_truncated, "stdout"}, std::pair{r.err_truncated, "stderr"}}) {
    if (trunc) {
      r.denials.push_back(
          {"output", "write", "",
           std::string(name) + " exceeded " + std::to_string(cap) + " bytes; the rest was dropped",
           0});
    }
  }
}

}  // namespace

std::unique_ptr<Box> Box::start(const BoxSpec& spec) {
  std::unique_ptr<Box> box(new Box());
  box->profile_ = spec.profile;
  box->chip_ = spec.chip;
  const Profile& prof = spec.profile;
  InitConfig cfg;
  cfg.plan.worktree = existing_dir(spec.worktree, "worktree");
  for (const auto& p : spec.rw_extra)
    cfg.plan.rw_extra.push_back(existing_dir(p, "writable path"));
  std::vector<fs::path> writable = {spec.worktree};
  writable.insert(writable.end(), spec.rw_extra.begin(), spec.rw_extra.end());
  for (const auto& p : spec.ro) {
    auto d = declared_path(p, "read-only path", writable);
    if (!d) throw Error("read-only path " + quote(p.string()) + " does not exist");
    cfg.plan.ro.push_back(*d);
  }
  for (const auto& p : spec.mask) {
    if (auto d = declared_path(p, "no-peek path", writable)) cfg.plan.mask.push_back(*d);
  }
  cfg.plan.system_ro = prof.system_ro;
  cfg.plan.tmpfs = prof.tmpfs;
  cfg.plan.dev = prof.dev;
  if (spec.chip) {
    for (const auto& d : spec.chip->devices) {
      struct stat st;
      if (::stat(d.c_str(), &st) != 0) {
        throw_sys("chip " + spec.chip->id + ": stat", "device " + d.string(), errno);
      }
      if (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode)) {
        throw Error("chip " + spec.chip->id + ": " + quote(d.string()) + " is not a device node");
      }
      cfg.plan.devices.push_back(d);
    }
    // A CPU chip is a lock and an environment; an accelerator without device nodes is a
    // misconfigured inventory, refused rather than run with nothing to confine.
    if (cfg.plan.devices.empty() && spec.chip->kind != "cpu") {
      throw Error("chip " + spec.chip->id + ": lists no device nodes");
    }
  }
  cfg.hostname = prof.hostname;
  cfg.limits = prof.limits;

  const BoxUser user = box_user(cfg.plan.worktree);

  if (prof.landlock != Need::Off) {
    int abi = landlock_abi();
    if (abi < 1 && prof.landlock == Need::Required) {
      throw Error("landlock: required by profile " + quote(prof.name) +
                  " but the kernel does not offer it (landlock_create_ruleset: ABI 0)");
    }
    cfg.landlock_abi = abi;
  }
  // The filters do not depend on the profile: compile them once per process.
  static const std::vector<sock_filter> errno_filter = SeccompFilter(DenyAction::Errno).bpf();
  cfg.seccomp_files = errno_filter;
  cfg.seccomp = errno_filter;
  if (prof.seccomp_notify != Need::Off) {
    static const bool available = seccomp_notify_available();
    if (available) {
      static const std::vector<sock_filter> notify_filter = SeccompFilter(DenyAction::Notify).bpf();
      cfg.seccomp = notify_filter;
      cfg.notify = true;
    } else if (prof.seccomp_notify == Need::Required) {
      throw Error("seccomp: user notification required by profile " + quote(prof.name) +
                  " but the kernel does not offer it (SECCOMP_GET_ACTION_AVAIL: "
                  "SECCOMP_RET_USER_NOTIF)");
    }
  }
  box->notify_ = cfg.notify;
  box->cgroup_ = Cgroup::create(prof.limits, prof.cgroup);
  cfg.nproc_backstop = !box->cgroup_;

  cfg.uid = user.uid;
  cfg.gid = user.gid;
  cfg.as_root = user.as_root;

  int ctl[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ctl) != 0) {
    throw_sys("box: socketpair", "AF_UNIX, SOCK_SEQPACKET", errno);
  }
  box->control_.reset(ctl[0]);
  const UniqueFd program_end(ctl[1]);  // the program's copy is the one that counts
  box->holder_pid_ = spawn_box_program(program_end.get());
  // Sent after the spawn: the program reads it as its first message.
  send_with_fds(box->control_.get(), encode_init_config(cfg), {});
  // Startup: the holder reports pid 1, which joins the cgroup while it builds the tree, then
  // pid 1 reports ready or the layer that failed, in either order. Pid 1 reads no request
  // before it is ready, and none is sent before it joined.
  box->startup_deadline_ = Clock::now() + kStartupTimeout;
  while (box->init_pid_ < 0)
    box->read_startup_message();
  return box;
}

std::unique_ptr<Box> Box::open(const BoxSpec& spec) {
  auto box = start(spec);
  box->await_ready();
  return box;
}

void Box::read_startup_message() {
  pollfd pfd{control_.get(), POLLIN, 0};
  const auto left =
      std::chrono::duration_cast<milliseconds>(startup_deadline_ - Clock::now()).count();
  if (left <= 0 || ::poll(&pfd, 1, int(left)) == 0) {
    throw Error("box: did not start within " + std::to_string(kStartupTimeout.count()) + " s");
  }
  std::string msg;
  std::vector<int> fds;
  if (!recv_with_fds(control_.get(), msg, fds, 0) || msg.empty()) {
    throw Error("box: the sandbox exited while starting");
  }
  const auto kind = Startup(msg[0]);
  const std::string text = msg.substr(1);
  if (kind == Startup::Error) throw Error(text);
  if (kind == Startup::Pid) {
    char* end = nullptr;
    const long pid = std::strtol(text.c_str(), &end, 10);
    if (pid <= 0 || *end != '\0') throw Error("box: malformed pid report " + quote(text));
    init_pid_ = pid_t(pid);
    if (cgroup_) cgroup_->attach(init_pid_);
  } else if (kind == Startup::Ready) {
    ready_ = true;
  }
}

void Box::await_ready() {
  while (!ready_)
    read_startup_message();
}

void Box::shutdown() {
  // Both are unreaped children of this process, so their pids cannot have been reused.
  for (pid_t pid : {init_pid_, holder_pid_}) {
    if (pid > 0) ::kill(pid, SIGKILL);
  }
  control_.reset();
  // Both are children of this process (pid 1 by CLONE_PARENT). Pid 1 is reaped only after
  // every process of its namespace is gone; the holder exited once pid 1 was reported.
  for (pid_t* pid : {&init_pid_, &holder_pid_}) {
    int status;
    if (*pid > 0) {
      while (::waitpid(*pid, &status, 0) < 0 && errno == EINTR) {
      }
    }
    *pid = -1;
  }
  cgroup_.reset();
}

Box::~Box() {
  shutdown();
}

void Box::send_request(const std::string& message, const std::vector<int>& fds) {
  if (message.size() > kMaxMessage) {
    throw Error("box: request of " + std::to_string(message.size()) +
                " bytes; argv, environment and paths of one call are limited to " +
                std::to_string(kMaxMessage) + " bytes");
  }
  std::lock_guard<std::mutex> lock(send_mu_);
  if (!control_) throw Error("box: already closed");
  send_with_fds(control_.get(), message, fds);
}

RunResult Box::run(const RunRequest& req) {
  return run(req, true);
}

void Box::send_call(const std::string& request, std::vector<UniqueFd> box_ends) {
  std::vector<int> fds;
  for (const UniqueFd& fd : box_ends)
    fds.push_back(fd.get());
  send_request(request, fds);
  box_ends.clear();  // pid 1 holds them now: a stream ends when its side closes
  await_ready();     // a box from start(): the request waited in the socket while it was built
}

RunResult Box::run(const RunRequest& req, bool own_pid_namespace) {
  if (req.argv.empty() || req.argv[0].empty()) throw Error("run: empty command");
  if (req.use_chip && !chip_) throw Error("run: use_chip asked, but this box has no chip");
  auto extra = req.env;
  if (req.use_chip) {
    for (const auto& [k, v] : chip_->env)
      extra[k] = v;
  }
  const auto env = build_environment(profile_.env, environ, extra);
  const double timeout_s = req.timeout_s > 0 ? req.timeout_s : profile_.limits.timeout_s;
  const CgroupCounts before = counts(cgroup_.get());

  FdPair reply = make_stream_pair(), in = make_stream_pair(), out = make_pipe(), err = make_pipe();
  wire::Writer w;
  w.str(std::string(1, char(Request::Run))).strs(req.argv).strs(env).str(req.cwd);
  w.u64(req.use_chip).u64(uint64_t(timeout_s * 1000)).u64(own_pid_namespace);
  const auto start = Clock::now();
  std::vector<UniqueFd> box_ends;
  for (FdPair* p : {&reply, &in, &out, &err})
    box_ends.push_back(std::move(p->second));
  send_call(w.bytes(), std::move(box_ends));
  Exchange ex = pump(
      {std::move(reply.first), std::move(in.first), std::move(out.first), std::move(err.first)},
      req.stdin_data, profile_.limits.output_bytes, answer_deadline(start, timeout_s));
  const double wall_s = std::chrono::duration<double>(Clock::now() - start).count();

  RunResult r = result_of(std::move(ex), notify_);
  r.wall_s = wall_s;
  add_limit_denials(r, timeout_s);
  add_cgroup_denials(r, cgroup_.get(), before);
  add_output_denials(r, profile_.limits.output_bytes);
  return r;
}

FileResult Box::file(const FileRequest& req) {
  if (req.path.empty()) throw Error("file: empty path");
  FdPair reply = make_stream_pair(), data = make_stream_pair();
  wire::Writer w;
  w.str(std::string(1, char(Request::File))).u64(uint64_t(req.op)).str(req.path).u64(req.max_bytes);
  w.u64(uint64_t(profile_.limits.timeout_s * 1000));
  std::vector<UniqueFd> box_ends;
  box_ends.push_back(std::move(reply.second));
  box_ends.push_back(std::move(data.second));
  send_call(w.bytes(), std::move(box_ends));
  const std::string payload = req.op == FileRequest::Write ? req.data : std::string();
  Exchange ex = pump({std::move(reply.first), std::move(data.first), {}, {}}, payload, 0,
                     answer_deadline(Clock::now(), profile_.limits.timeout_s));
  for (const auto& [type, body] : ex.frames) {
    if (type == wire::Frame::SetupError) throw Error(body);
    if (type == wire::Frame::FileResult) return decode_file_result(body);
  }
  throw Error("file: the confined child ended without a result");
}

RunResult exec_once(const BoxSpec& spec, const RunRequest& request) {
  // The request is sent as soon as pid 1 is in its cgroup, while it still builds the tree: no
  // round trip for "ready". The box closes after this one command, killing whatever it leaves:
  // no init of its own.
  auto box = Box::start(spec);
  RunResult r = box->run(request, false);
  box.reset();
  return r;
}

}  // namespace kd::sandbox
