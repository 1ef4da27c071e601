#include "sandbox/rlimits.h"

#include <sys/resource.h>

#include <cerrno>
#include <string>

#include "common/errors.h"

namespace kd::sandbox {
namespace {

// hard_extra: room above the soft limit, so SIGXCPU comes before the hard limit's SIGKILL.
void set(int resource, const char* name, rlim_t value, rlim_t hard_extra = 0) {
  rlimit cur{};
  if (::getrlimit(resource, &cur) != 0) throw_sys("rlimits: getrlimit", name, errno);
  // Never raise a limit the host already set lower.
  rlim_t v = (cur.rlim_max != RLIM_INFINITY && cur.rlim_max < value) ? cur.rlim_max : value;
  rlim_t hard = (cur.rlim_max != RLIM_INFINITY && cur.rlim_max < v + hard_extra) ? cur.rlim_max
                                                                                 : v + hard_extra;
  rlimit lim{v, hard};
  if (::setrlimit(resource, &lim) != 0)
    throw_sys("rlimits: setrlimit", name + ("=" + std::to_string(v)), errno);
}

}  // namespace

void apply_rlimits(const Limits& l, bool nproc_backstop) {
  constexpr rlim_t kMiB = 1 << 20;
  set(RLIMIT_CORE, "RLIMIT_CORE", 0);
  set(RLIMIT_CPU, "RLIMIT_CPU", l.cpu_s, 1);
  set(RLIMIT_FSIZE, "RLIMIT_FSIZE", l.fsize_mb * kMiB);
  set(RLIMIT_NOFILE, "RLIMIT_NOFILE", l.nofile);
  if (l.address_space_mb > 0) set(RLIMIT_AS, "RLIMIT_AS", l.address_space_mb * kMiB);
  if (nproc_backstop) set(RLIMIT_NPROC, "RLIMIT_NPROC", l.pids);
}

}  // namespace kd::sandbox
