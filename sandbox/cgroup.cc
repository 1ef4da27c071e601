#include "sandbox/cgroup.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <string>
#include <thread>

#include "common/errors.h"

namespace kd::sandbox {
namespace {

namespace fs = std::filesystem;
const fs::path kRoot = "/sys/fs/cgroup";

void write_value(const fs::path& file, const std::string& value) {
  int fd = ::open(file.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) throw_sys("cgroup: open", file.string(), errno);
  ssize_t n = ::write(fd, value.data(), value.size());
  int err = errno;
  ::close(fd);
  if (n != ssize_t(value.size())) throw_sys("cgroup: write", file.string() + " <- " + value, err);
}

std::string read_small(const fs::path& file) {
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  char buf[4096];
  ssize_t n = ::read(fd, buf, sizeof buf);
  ::close(fd);
  return n > 0 ? std::string(buf, size_t(n)) : "";
}

// The number after `key ` in a flat keyed file ("max 3", "oom_kill 1").
uint64_t keyed(const fs::path& file, const std::string& key) {
  const std::string text = read_small(file);
  size_t pos = 0;
  while ((pos = text.find(key + " ", pos)) != std::string::npos) {
    if (pos == 0 || text[pos - 1] == '\n') return std::stoull(text.substr(pos + key.size() + 1));
    pos += key.size();
  }
  return 0;
}

std::string unique_name() {
  static std::atomic<unsigned> counter{0};
  return "kdispatch-box-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
}

}  // namespace

std::unique_ptr<Cgroup> Cgroup::create(const Limits& limits, Need need) {
  if (need == Need::Off) return nullptr;
  std::unique_ptr<Cgroup> cg(new Cgroup());
  cg->pids_ = limits.pids;
  const std::string name = unique_name();
  try {
    if (::access((kRoot / "cgroup.controllers").c_str(), F_OK) == 0) {
      cg->v2_ = true;
      const fs::path dir = kRoot / name;
      if (::mkdir(dir.c_str(), 0755) != 0) throw_sys("cgroup: mkdir", dir.string(), errno);
      cg->dirs_.push_back(dir);
      cg->pids_dir_ = cg->memory_dir_ = dir;
      write_value(dir / "pids.max", std::to_string(limits.pids));
      write_value(dir / "memory.max", std::to_string(limits.memory_mb << 20));
    } else {
      for (const char* ctl : {"pids", "memory"}) {
        const fs::path dir = kRoot / ctl / name;
        if (::mkdir(dir.c_str(), 0755) != 0) throw_sys("cgroup: mkdir", dir.string(), errno);
        cg->dirs_.push_back(dir);
      }
      cg->pids_dir_ = kRoot / "pids" / name;
      cg->memory_dir_ = kRoot / "memory" / name;
      write_value(cg->pids_dir_ / "pids.max", std::to_string(limits.pids));
      write_value(cg->memory_dir_ / "memory.limit_in_bytes",
                  std::to_string(limits.memory_mb << 20));
    }
  } catch (const Error&) {
    if (need == Need::Required) throw;
    return nullptr;  // best_effort: rlimits remain (RLIMIT_NPROC becomes the backstop)
  }
  return cg;
}

Cgroup::~Cgroup() {
  for (auto it = dirs_.rbegin(); it != dirs_.rend(); ++it) {
    // The last task may still be leaving the group just after it was reaped.
    for (int i = 0; i < 100 && ::rmdir(it->c_str()) != 0 && errno == EBUSY; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
}

void Cgroup::attach(pid_t process) const {
  const std::string pid = std::to_string(process);
  write_value(pids_dir_ / "cgroup.procs", pid);
  if (memory_dir_ != pids_dir_) write_value(memory_dir_ / "cgroup.procs", pid);
}

uint64_t Cgroup::pids_max_hits() const {
  return keyed(pids_dir_ / "pids.events", "max");
}

uint64_t Cgroup::oom_kills() const {
  return v2_ ? keyed(memory_dir_ / "memory.events", "oom_kill")
             : keyed(memory_dir_ / "memory.oom_control", "oom_kill");
}

}  // namespace kd::sandbox
