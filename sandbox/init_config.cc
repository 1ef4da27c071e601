#include "sandbox/init_config.h"

#include <cmath>
#include <cstring>

#include "common/errors.h"
#include "sandbox/wire.h"

namespace kd::sandbox {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void malformed(const std::string& what) {
  throw Error("box: malformed config: " + what);
}

uint64_t double_bits(double d) {
  uint64_t v;
  std::memcpy(&v, &d, sizeof v);
  return v;
}

void put_paths(wire::Writer& w, const std::vector<fs::path>& paths) {
  w.u64(paths.size());
  for (const auto& p : paths)
    w.str(p.string());
}

fs::path get_path(wire::Reader& rd, const char* field) {
  const std::string s = rd.str();
  if (s.empty() || s[0] != '/' || s.find('\0') != std::string::npos) {
    malformed(std::string(field) + " " + quote(s) + " is not an absolute path");
  }
  return s;
}

// A flag is 0 or 1, as encode writes it: any other value is a message of another layout, not
// a truth value to guess at.
bool get_flag(wire::Reader& rd, const char* field) {
  const uint64_t v = rd.u64();
  if (v > 1) malformed(std::string(field) + " flag " + std::to_string(v) + " (0 or 1)");
  return v == 1;
}

std::vector<fs::path> get_paths(wire::Reader& rd, const char* field) {
  std::vector<fs::path> out;
  const uint64_t n = rd.u64();
  for (uint64_t i = 0; i < n; ++i)
    out.push_back(get_path(rd, field));  // a bogus count runs the message short and throws
  return out;
}

void put_program(wire::Writer& w, const std::vector<sock_filter>& prog) {
  w.str(std::string(reinterpret_cast<const char*>(prog.data()), prog.size() * sizeof(sock_filter)));
}

std::vector<sock_filter> get_program(wire::Reader& rd, const char* field) {
  const std::string bytes = rd.str();
  if (bytes.empty() || bytes.size() % sizeof(sock_filter) != 0 ||
      bytes.size() / sizeof(sock_filter) > BPF_MAXINSNS) {
    malformed(std::string(field) + " seccomp program of " + std::to_string(bytes.size()) +
              " bytes (1.." + std::to_string(BPF_MAXINSNS) + " instructions of " +
              std::to_string(sizeof(sock_filter)) + " bytes)");
  }
  std::vector<sock_filter> prog(bytes.size() / sizeof(sock_filter));
  std::memcpy(prog.data(), bytes.data(), bytes.size());
  return prog;
}

}  // namespace

std::string encode_init_config(const InitConfig& c) {
  wire::Writer w;
  w.u64(kInitConfigVersion).u64(c.uid).u64(c.gid).u64(c.as_root);
  const MountPlan& p = c.plan;
  put_paths(w, p.system_ro);
  w.u64(p.tmpfs.size());
  for (const auto& t : p.tmpfs)
    w.str(t.path.string()).u64(t.size_mb);
  w.strs(p.dev);
  w.str(p.worktree.string());
  put_paths(w, p.rw_extra);
  put_paths(w, p.ro);
  put_paths(w, p.mask);
  put_paths(w, p.devices);
  w.str(c.hostname).u64(uint64_t(c.landlock_abi));
  put_program(w, c.seccomp);
  put_program(w, c.seccomp_files);
  w.u64(c.notify);
  const Limits& l = c.limits;
  w.u64(double_bits(l.timeout_s)).u64(l.output_bytes).u64(l.pids).u64(l.memory_mb);
  w.u64(l.address_space_mb).u64(l.nofile).u64(l.fsize_mb).u64(l.cpu_s);
  w.u64(c.nproc_backstop);
  return w.bytes();
}

InitConfig decode_init_config(const std::string& bytes) {
  wire::Reader rd(bytes);
  InitConfig c;
  try {
    const uint64_t version = rd.u64();
    if (version != kInitConfigVersion) {
      malformed("version " + std::to_string(version) + ", this box program reads version " +
                std::to_string(kInitConfigVersion) + " (a box program of another build?)");
    }
    const uint64_t uid = rd.u64(), gid = rd.u64();
    if (uid == 0 || uid > 0xfffffffe || gid > 0xfffffffe) {
      malformed("uid " + std::to_string(uid) + " gid " + std::to_string(gid) +
                " (a box never runs as root)");
    }
    c.uid = uid_t(uid);
    c.gid = gid_t(gid);
    c.as_root = get_flag(rd, "as-root");
    MountPlan& p = c.plan;
    p.system_ro = get_paths(rd, "system path");
    const uint64_t tmpfs = rd.u64();
    for (uint64_t i = 0; i < tmpfs; ++i) {
      TmpfsMount t;
      t.path = get_path(rd, "tmpfs");
      t.size_mb = rd.u64();
      p.tmpfs.push_back(t);
    }
    p.dev = rd.strs();
    for (const auto& d : p.dev) {
      if (d.empty() || d == "." || d == ".." || d.find_first_of(std::string("/\0", 2)) != d.npos)
        malformed("/dev entry " + quote(d) + " is not a plain name");
    }
    p.worktree = get_path(rd, "worktree");
    p.rw_extra = get_paths(rd, "writable path");
    p.ro = get_paths(rd, "read-only path");
    p.mask = get_paths(rd, "no-peek path");
    p.devices = get_paths(rd, "device");
    c.hostname = rd.str();
    if (c.hostname.empty() || c.hostname.size() > 64 || c.hostname.find('\0') != std::string::npos)
      malformed("hostname " + quote(c.hostname) + " (1 to 64 characters)");
    const uint64_t abi = rd.u64();
    if (abi > 255) malformed("Landlock ABI " + std::to_string(abi));
    c.landlock_abi = int(abi);
    c.seccomp = get_program(rd, "command");
    c.seccomp_files = get_program(rd, "file operation");
    c.notify = get_flag(rd, "notify");
    Limits& l = c.limits;
    const uint64_t timeout_bits = rd.u64();
    std::memcpy(&l.timeout_s, &timeout_bits, sizeof l.timeout_s);
    if (!std::isfinite(l.timeout_s) || l.timeout_s <= 0)
      malformed("timeout " + std::to_string(l.timeout_s) + " s");
    l.output_bytes = rd.u64();
    l.pids = rd.u64();
    l.memory_mb = rd.u64();
    l.address_space_mb = rd.u64();
    l.nofile = rd.u64();
    l.fsize_mb = rd.u64();
    l.cpu_s = rd.u64();
    c.nproc_backstop = get_flag(rd, "nproc backstop");
  } catch (const Error& e) {
    const std::string what = e.what();
    if (what.rfind("box: malformed config", 0) == 0) throw;
    const size_t open = what.find('(');
    malformed("runs short " + (open == std::string::npos ? what : what.substr(open)));
  }
  if (!rd.at_end()) malformed(std::to_string(rd.left()) + " bytes after the last field");
  return c;
}

}  // namespace kd::sandbox
