#include "verify/worker_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <exception>
#include <fstream>
#include <sstream>

#include "common/errors.h"
#include "sandbox/box_user.h"

namespace kd::verify {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Opened read-write by the parent: the open never waits for the worker, and a worker that
// opens its end later finds a partner already there.
UniqueFd open_fifo(const fs::path& p) {
  UniqueFd fd(::open(p.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC));
  if (!fd) throw_sys("open", p.string(), errno);
  // Larger pipes: fewer wake-ups per array, the same for both workers.
  ::fcntl(fd.get(), F_SETPIPE_SZ, 1 << 20);
  return fd;
}

Clock::time_point after(double seconds) {
  return Clock::now() + std::chrono::microseconds(static_cast<long long>(seconds * 1e6));
}

// The pids of `root` and every process below it, but for `skip` and the processes below it.
std::vector<pid_t> process_tree(pid_t root, pid_t skip = 0) {
  std::vector<pid_t> all, todo = {root};
  while (!todo.empty()) {
    const pid_t p = todo.back();
    todo.pop_back();
    if (p == skip) continue;
    all.push_back(p);
    std::error_code ec;
    for (const auto& t : fs::directory_iterator("/proc/" + std::to_string(p) + "/task", ec)) {
      std::ifstream children(t.path() / "children");
      for (pid_t c; children >> c;)
        todo.push_back(c);
    }
  }
  return all;
}

// The host pid of the process of `root`'s tree whose pid in its own namespace is `inner`
// (the last field of /proc/PID/status's NSpid line); 0 when there is none.
pid_t host_pid_of(pid_t root, long inner) {
  for (pid_t p : process_tree(root)) {
    std::ifstream status("/proc/" + std::to_string(p) + "/status");
    for (std::string line; std::getline(status, line);) {
      if (line.rfind("NSpid:", 0) != 0) continue;
      const auto last = line.find_last_of(" \t");
      if (last != std::string::npos && std::strtol(line.c_str() + last + 1, nullptr, 10) == inner)
        return p;
      break;
    }
  }
  return 0;
}

// The fields of /proc/PID/stat after the process's name (state first); "" for no such process.
// The name is skipped by its last ')', as it may hold spaces and parentheses.
std::string stat_fields(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');
  return close == std::string::npos || close + 2 > text.size() ? "" : text.substr(close + 2);
}

// False once `pid` has ended, reaped or not (a zombie's parent may never reap it).
bool process_lives(pid_t pid) {
  const std::string f = stat_fields(pid);
  return !f.empty() && f[0] != 'Z' && f[0] != 'X';
}

}  // namespace

const std::map<std::string, std::string>& measured_worker_env() {
  static const std::map<std::string, std::string> env = {
      {"OMP_NUM_THREADS", "1"},
      {"OPENBLAS_NUM_THREADS", "1"},
      {"MKL_NUM_THREADS", "1"},
      // glibc's largest fixed mmap threshold (32 MiB on 64-bit) and a trim threshold of 1 GiB.
      {"MALLOC_MMAP_THRESHOLD_", "33554432"},
      {"MALLOC_TRIM_THRESHOLD_", "1073741824"}};
  return env;
}

double box_cpu_seconds(pid_t root, pid_t skip) {
  double ns = 0;
  for (pid_t p : process_tree(root, skip)) {
    std::error_code ec;
    for (const auto& t : fs::directory_iterator("/proc/" + std::to_string(p) + "/task", ec)) {
      std::ifstream stat(t.path() / "schedstat");
      double run = 0;
      if (stat >> run) ns += run;
    }
  }
  return ns * 1e-9;
}

double box_cpu_seconds_with_exited(pid_t root) {
  static const double tick = double(::sysconf(_SC_CLK_TCK));
  double total = 0;
  for (pid_t p : process_tree(root)) {
    std::istringstream fields(stat_fields(p));
    std::vector<std::string> f;
    for (std::string x; fields >> x && f.size() < 15;)
      f.push_back(x);
    // After the name: state(0) ... utime(11) stime(12) cutime(13) cstime(14).
    if (f.size() >= 15)
      for (int k : {11, 12, 13, 14})
        total += std::strtod(f[k].c_str(), nullptr) / tick;
  }
  return total;
}

void Worker::open_pipes(const fs::path& dir) {
  fs::create_directories(dir);
  const fs::path req = dir / "request", rep = dir / "reply", data = dir / "data";
  for (const auto& p : {req, rep})
    if (::mkfifo(p.c_str(), 0600) != 0) throw_sys("mkfifo", p.string(), errno);
  data_ = UniqueFd(::open(data.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (!data_) throw_sys("open", data.string(), errno);
  sandbox::hand_to_box_user(dir);
  request_ = open_fifo(req);
  reply_ = open_fifo(rep);
  for (const auto& p : {req, rep, data})
    spec_.argv.push_back(p.string());
}

std::unique_ptr<Worker> Worker::start(WorkerSpec spec) {
  std::unique_ptr<Worker> w(new Worker(std::move(spec)));
  const fs::path& dir = w->spec_.pipe_dir;
  w->open_pipes(dir);
  if (!w->spec_.companion.empty()) {
    WorkerSpec c;
    c.name = w->spec_.companion;
    w->companion_.reset(new Worker(std::move(c)));
    w->companion_->host_ = w.get();
    w->companion_->open_pipes(dir / w->spec_.companion);
    // The program serves both: its argv ends with the host's pipes, then the companion's.
    for (const auto& a : w->companion_->spec_.argv)
      w->spec_.argv.push_back(a);
  }
  sandbox::BoxSpec box = w->spec_.box;
  box.rw_extra.push_back(dir);
  w->box_ = sandbox::Box::open(box);
  sandbox::RunRequest run;
  run.argv = w->spec_.argv;
  run.cwd = w->spec_.cwd;
  run.env = w->spec_.env;
  run.use_chip = box.chip.has_value();
  run.timeout_s = w->spec_.timeout_s;
  w->running_ = true;
  Worker* self = w.get();
  w->runner_ = std::thread([self, run] {
    try {
      self->result_ = self->box_->run(run);
    } catch (const std::exception& e) {
      self->result_.exit_code = -1;
      self->result_.err = std::string("the box failed: ") + e.what();
    }
    std::lock_guard lock(self->done_mutex_);
    self->running_ = false;
    self->done_.notify_all();
  });
  return w;
}

Worker& Worker::companion() {
  if (!companion_) throw Error("the " + spec_.name + " worker serves no companion");
  return *companion_;
}

bool Worker::alive() const {
  if (!host_) return running_;
  return host_->running_ && (host_->companion_pid_ == 0 || process_lives(host_->companion_pid_));
}

double Worker::cpu_now() const {
  return host_ ? 0 : box_cpu_seconds(box_->init_pid(), companion_pid_);
}

void Worker::note_companion_pid(const nlohmann::json& header) {
  if (!host_ || host_->companion_pid_ != 0) return;
  const std::string what = "the " + spec_.name + " worker";
  const auto pid = header.find("pid");
  if (pid == header.end() || !pid->is_number_unsigned() || pid->get<long>() <= 0)
    throw Error(what + "'s first answer does not say its pid (" + host_->name() +
                "'s CPU clock must leave it out)");
  host_->companion_pid_ = host_pid_of(host_->box_->init_pid(), pid->get<long>());
  if (host_->companion_pid_ == 0)
    throw Error(what + "'s pid " + std::to_string(pid->get<long>()) + " is not a process of the " +
                host_->name() + " worker's box");
}

void Worker::send(const nlohmann::json& header, const std::vector<WireArray>& arrays,
                  double timeout_s) {
  const std::string what = "the " + spec_.name + " worker";
  if (finished_ || asked_to_quit_) throw Error(what + " has already finished");
  if (pending_) throw Error(what + " still owes the answer to an earlier request");
  deadline_ = after(timeout_s);
  // The clock runs from before the inputs reach the data file until the answers are read back:
  // a worker can neither start before it nor finish after it.
  cpu_at_send_ = cpu_now();
  sent_at_ = Clock::now();
  std::size_t end = 0;
  nlohmann::json h = header;
  h["arrays"] = put_arrays(data_.get(), arrays, 0, end, what);
  h["out_offset"] = (end + kArrayAlign - 1) / kArrayAlign * kArrayAlign;
  pending_ = true;
  write_header(request_.get(), h, deadline_, what);
}

void Worker::receive(TimedFrame& out) {
  const std::string what = "the " + spec_.name + " worker";
  if (!pending_) throw Error(what + " was sent no request to answer");
  pending_ = false;
  out.frame.header = read_header(
      reply_.get(), deadline_, [this] { return alive(); }, what);
  note_companion_pid(out.frame.header);
  get_arrays(data_.get(), out.frame.header.value("arrays", nlohmann::json::array()), what,
             out.frame.arrays);
  out.seconds = std::chrono::duration<double>(Clock::now() - sent_at_).count();
  out.cpu_seconds = cpu_now() - cpu_at_send_;
}

void Worker::ask_to_quit() {
  if (companion_) companion_->ask_to_quit();
  if (finished_ || asked_to_quit_) return;
  asked_to_quit_ = true;
  try {
    if (alive())
      write_header(request_.get(), {{"op", "quit"}}, after(1), "the " + spec_.name + " worker");
  } catch (const std::exception&) {
    // A worker that no longer reads is killed by finish().
  }
}

sandbox::RunResult Worker::finish() {
  if (finished_) return result_;
  ask_to_quit();
  finished_ = true;
  request_.reset();
  data_.reset();
  if (companion_) companion_->finish();
  if (host_) {  // its box is the host's, which waits for it
    reply_.reset();
    return result_;
  }
  {
    std::unique_lock lock(done_mutex_);
    done_.wait_for(lock, std::chrono::seconds(5), [this] { return !running_; });
  }
  // Killing the box's init ends its whole pid namespace; run() then returns.
  if (running_ && box_) ::kill(box_->init_pid(), SIGKILL);
  if (runner_.joinable()) runner_.join();
  reply_.reset();
  return result_;
}

Worker::~Worker() {
  try {
    finish();
  } catch (const std::exception&) {
  }
}

}  // namespace kd::verify
