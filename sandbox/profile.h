// Sandbox profiles as data (policies/sandbox/<name>.json), validated at load.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace kd::sandbox {

// How strongly a layer that depends on the host kernel or privileges is asked for.
enum class Need { Required, BestEffort, Off };

struct TmpfsMount {
  std::filesystem::path path;  // absolute, inside the box
  uint64_t size_mb = 0;
};

struct Limits {
  double timeout_s = 600;           // wall clock per command, default when the call names none
  uint64_t output_bytes = 1 << 20;  // per stream; the rest is drained and dropped
  uint64_t pids = 512;              // cgroup pids.max (and RLIMIT_NPROC as a backstop)
  uint64_t memory_mb = 8192;        // cgroup memory limit
  uint64_t address_space_mb = 0;    // RLIMIT_AS, 0 = unlimited
  uint64_t nofile = 1024;           // RLIMIT_NOFILE
  uint64_t fsize_mb = 4096;         // RLIMIT_FSIZE
  uint64_t cpu_s = 3600;            // RLIMIT_CPU
};

struct EnvPolicy {
  std::map<std::string, std::string> set;  // always set inside
  std::vector<std::string> pass;           // host variables passed through ("LC_*" globs)
  std::vector<std::string> deny;           // never enter, even when a caller asks ("*_API_KEY")
};

struct Profile {
  std::string name;
  std::filesystem::path source;
  std::vector<std::filesystem::path> system_ro;  // host dirs bound read-only when present
  std::vector<TmpfsMount> tmpfs;                 // private, size-limited
  std::vector<std::string> dev;                  // names under /dev bound from the host
  std::string hostname = "sandbox";
  Need landlock = Need::Required;
  Need cgroup = Need::BestEffort;
  // Seccomp denials reported through user notification; without it they reach the command as
  // EPERM only, and every result says seccomp denials were not observed.
  Need seccomp_notify = Need::Required;
  Limits limits;
  EnvPolicy env;
};

// Parses and validates a profile; throws kd::Error naming the file and the field.
Profile parse_profile(const std::string& json_text, const std::filesystem::path& source);

// "author" | "verifier" (policies/sandbox/<name>.json) or a path to a profile file.
Profile load_profile(const std::string& name_or_path);

}  // namespace kd::sandbox
