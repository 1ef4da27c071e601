#include "sandbox/landlock.h"

#include <fcntl.h>
#include <linux/landlock.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "common/errors.h"

// Debian 12's kernel headers predate Landlock ABI 3; the values are the kernel's UAPI.
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif

namespace kd::sandbox {
namespace {

constexpr uint64_t kExecute = 1ULL << 0, kWriteFile = 1ULL << 1, kReadFile = 1ULL << 2,
                   kReadDir = 1ULL << 3, kRemoveDir = 1ULL << 4, kRemoveFile = 1ULL << 5,
                   kMakeChar = 1ULL << 6, kMakeDir = 1ULL << 7, kMakeReg = 1ULL << 8,
                   kMakeSock = 1ULL << 9, kMakeFifo = 1ULL << 10, kMakeBlock = 1ULL << 11,
                   kMakeSym = 1ULL << 12, kRefer = 1ULL << 13, kTruncate = 1ULL << 14,
                   kIoctlDev = 1ULL << 15;
constexpr uint64_t kScopeAbstractUnix = 1ULL << 0, kScopeSignal = 1ULL << 1;

struct RulesetAttr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};

struct PathBeneathAttr {
  uint64_t allowed_access;
  int32_t parent_fd;
} __attribute__((packed));

uint64_t handled_for(int abi) {
  uint64_t fs = kExecute | kWriteFile | kReadFile | kReadDir | kRemoveDir | kRemoveFile |
                kMakeChar | kMakeDir | kMakeReg | kMakeSock | kMakeFifo | kMakeBlock | kMakeSym;
  if (abi >= 2) fs |= kRefer;
  if (abi >= 3) fs |= kTruncate;
  if (abi >= 5) fs |= kIoctlDev;
  return fs;
}

// Rights that make sense on a non-directory (the kernel rejects the others).
constexpr uint64_t kFileRights = kExecute | kWriteFile | kReadFile | kTruncate | kIoctlDev;

void add_rule(int ruleset, const std::filesystem::path& path, uint64_t access, uint64_t handled) {
  int fd = ::open(path.c_str(), O_PATH | O_CLOEXEC);
  if (fd < 0) throw_sys("landlock: open", path.string(), errno);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    throw_sys("landlock: fstat", path.string(), err);
  }
  if (!S_ISDIR(st.st_mode)) access &= kFileRights;
  PathBeneathAttr attr{access & handled, fd};
  long r = ::syscall(__NR_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &attr, 0);
  int err = errno;
  ::close(fd);
  if (r != 0) throw_sys("landlock: landlock_add_rule", path.string(), err);
}

}  // namespace

int landlock_abi() {
  long v = ::syscall(__NR_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  return v < 0 ? 0 : int(v);
}

int make_landlock_ruleset(const LandlockPaths& paths, int abi) {
  if (abi < 1) throw Error("landlock: not available in this kernel (ABI 0)");
  const uint64_t handled = handled_for(abi);
  RulesetAttr attr{handled, 0, abi >= 6 ? (kScopeAbstractUnix | kScopeSignal) : 0};
  const size_t size = abi >= 6 ? sizeof(RulesetAttr) : sizeof(uint64_t);
  long fd = ::syscall(__NR_landlock_create_ruleset, &attr, size, 0);
  if (fd < 0) throw_sys("landlock: landlock_create_ruleset", "ABI " + std::to_string(abi), errno);
  const uint64_t read = kExecute | kReadFile | kReadDir;
  const uint64_t write = kWriteFile | kRemoveDir | kRemoveFile | kMakeDir | kMakeReg | kMakeSock |
                         kMakeFifo | kMakeSym | kRefer | kTruncate;
  try {
    for (const auto& p : paths.read)
      add_rule(int(fd), p, read, handled);
    for (const auto& p : paths.write)
      add_rule(int(fd), p, read | write, handled);
    for (const auto& p : paths.devices) {
      add_rule(int(fd), p, read | kWriteFile | kTruncate | kIoctlDev, handled);
    }
  } catch (...) {
    ::close(int(fd));
    throw;
  }
  return int(fd);
}

StepFailure landlock_restrict(int ruleset_fd) noexcept {
  if (::syscall(__NR_landlock_restrict_self, ruleset_fd, 0) != 0) return {Step::Landlock, errno};
  return {};
}

}  // namespace kd::sandbox
