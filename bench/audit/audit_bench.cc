// Audits one file and reports throughput and peak RSS:
//   bench_audit full|chain FILE
// `full` runs every rule of policies/audit.json; `chain` disables all but chain integrity, so
// kdispatch records are never parsed.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

#include "audit/auditor.h"
#include "common/policy_path.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: bench_audit full|chain FILE\n");
    return 64;
  }
  std::string mode = argv[1];
  kd::audit::AuditPolicy policy = kd::audit::load_audit_policy(kd::policy_file("audit.json"));
  if (mode == "chain")
    for (const auto& r : kd::audit::audit_rules())
      policy.rule(r.rule).enabled = r.rule == kd::audit::Rule::ChainIntegrity;
  auto start = std::chrono::steady_clock::now();
  kd::audit::AuditReport report = kd::audit::run_audit({argv[2]}, {}, policy);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::uint64_t bytes = 0, lines = 0;
  for (const auto& f : report.files) {
    bytes += f.bytes;
    lines += f.lines;
  }
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  // CPU time is the one-core figure; wall time also counts waiting on a shared machine.
  double cpu =
      ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
  double mb = bytes / 1e6;
  std::printf(
      "%-5s %-22s %8.1f MB %8llu lines  wall %6.2f s %7.1f MB/s  cpu %6.2f s %7.1f MB/s  peak RSS "
      "%6.1f MiB  "
      "findings %zu\n",
      mode.c_str(), std::filesystem::path(argv[2]).filename().c_str(), mb,
      static_cast<unsigned long long>(lines), secs, mb / secs, cpu, mb / cpu, ru.ru_maxrss / 1024.0,
      report.findings.size());
  return 0;
}
