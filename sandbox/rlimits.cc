#include "sandbox/rlimits.h"

#include <cerrno>
#include <string>

#include "common/errors.h"

namespace kd::sandbox {
namespace {

// hard_extra: room above the soft limit, so SIGXCPU comes before the hard limit's SIGKILL.
void add(RlimitPlan& plan, int resource, const char* name, rlim_t value, rlim_t hard_extra = 0) {
  rlimit cur{};
  if (::getrlimit(resource, &cur) != 0) throw_sys("rlimits: getrlimit", name, errno);
  // Never raise a limit the host already set lower.
  rlim_t v = (cur.rlim_max != RLIM_INFINITY && cur.rlim_max < value) ? cur.rlim_max : value;
  rlim_t hard = (cur.rlim_max != RLIM_INFINITY && cur.rlim_max < v + hard_extra) ? cur.rlim_max
                                                                                 : v + hard_extra;
  plan.entries.at(plan.count++) = {resource, name, {v, hard}};
}

}  // namespace

RlimitPlan plan_rlimits(const Limits& l, bool nproc_backstop) {
  constexpr rlim_t kMiB = 1 << 20;
  RlimitPlan plan;
  add(plan, RLIMIT_CORE, "RLIMIT_CORE", 0);
  add(plan, RLIMIT_CPU, "RLIMIT_CPU", l.cpu_s, 1);
  add(plan, RLIMIT_FSIZE, "RLIMIT_FSIZE", l.fsize_mb * kMiB);
  add(plan, RLIMIT_NOFILE, "RLIMIT_NOFILE", l.nofile);
  if (l.address_space_mb > 0) add(plan, RLIMIT_AS, "RLIMIT_AS", l.address_space_mb * kMiB);
  if (nproc_backstop) add(plan, RLIMIT_NPROC, "RLIMIT_NPROC", l.pids);
  return plan;
}

StepFailure apply_rlimits(const RlimitPlan& plan) noexcept {
  for (size_t i = 0; i < plan.count; ++i) {
    if (::setrlimit(plan.entries[i].resource, &plan.entries[i].value) != 0)
      return {Step::Rlimits, errno, int32_t(i)};
  }
  return {};
}

std::string rlimit_error(const RlimitPlan& plan, const StepFailure& f) {
  const auto i = size_t(f.detail);
  if (i >= plan.count)
    return sys_message("rlimits: setrlimit", "entry " + std::to_string(i), f.err);
  const RlimitPlan::Entry& e = plan.entries[i];
  return sys_message("rlimits: setrlimit", e.name + ("=" + std::to_string(e.value.rlim_cur)),
                     f.err);
}

}  // namespace kd::sandbox
