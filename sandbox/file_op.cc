#include "sandbox/file_op.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>

#include "common/errors.h"
#include "sandbox/wire.h"

namespace kd::sandbox {
namespace {

std::string sys_error(const std::string& call, const std::string& path, const char* flags,
                      int err) {
  return call + "(" + quote(path) + (flags ? std::string(", ") + flags : "") +
         "): " + errno_name(err);
}

FileResult failed(const std::string& call, const std::string& path, const char* flags, int err) {
  FileResult r;
  r.err = err;
  r.error = sys_error(call, path, flags, err);
  return r;
}

char type_char(mode_t m) {
  if (S_ISREG(m)) return 'f';
  if (S_ISDIR(m)) return 'd';
  if (S_ISLNK(m)) return 'l';
  if (S_ISCHR(m)) return 'c';
  if (S_ISBLK(m)) return 'b';
  if (S_ISFIFO(m)) return 'p';
  return 's';
}

// Opens a regular file without blocking on a FIFO or touching a device.
int open_regular(const std::string& path, int flags, FileResult& error, const char* flag_text) {
  int fd = ::open(path.c_str(), flags | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0644);
  if (fd < 0) {
    error = failed("open", path, flag_text, errno);
    return -1;
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    error = failed("open", path, flag_text, S_ISDIR(st.st_mode) ? EISDIR : EINVAL);
    if (!S_ISDIR(st.st_mode)) error.error = "open(" + quote(path) + "): not a regular file";
    return -1;
  }
  ::fcntl(fd, F_SETFL, 0);
  return fd;
}

FileResult run_file_op(FileRequest::Op op, const std::string& path, uint64_t max_bytes,
                       int data_fd) {
  FileResult r;
  switch (op) {
    case FileRequest::Read: {
      int fd = open_regular(path, O_RDONLY, r, "O_RDONLY");
      if (fd < 0) return r;
      char buf[65536];
      ssize_t n;
      while ((n = ::read(fd, buf, sizeof buf)) > 0) {
        size_t room = max_bytes - std::min<uint64_t>(max_bytes, r.data.size());
        r.data.append(buf, std::min<size_t>(room, size_t(n)));
        if (size_t(n) > room) {
          r.truncated = true;
          break;
        }
      }
      if (n < 0) return failed("read", path, nullptr, errno);
      ::close(fd);
      break;
    }
    case FileRequest::Write: {
      int fd = open_regular(path, O_WRONLY | O_CREAT | O_TRUNC, r, "O_WRONLY|O_CREAT|O_TRUNC");
      if (fd < 0) return r;
      char buf[65536];
      ssize_t n;
      while ((n = ::read(data_fd, buf, sizeof buf)) > 0) {
        for (ssize_t off = 0; off < n;) {
          ssize_t w = ::write(fd, buf + off, size_t(n - off));
          if (w < 0) return failed("write", path, nullptr, errno);
          off += w;
        }
      }
      if (::close(fd) != 0) return failed("close", path, nullptr, errno);
      break;
    }
    case FileRequest::List: {
      DIR* d = ::opendir(path.c_str());
      if (!d) return failed("opendir", path, nullptr, errno);
      while (dirent* e = ::readdir(d)) {
        std::string name = e->d_name;
        if (name == "." || name == "..") continue;
        struct stat st;
        char t = '?';
        if (::fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
          t = type_char(st.st_mode);
        r.entries.emplace_back(name, t);
      }
      ::closedir(d);
      std::sort(r.entries.begin(), r.entries.end());
      break;
    }
    case FileRequest::Stat: {
      struct stat st;
      if (::fstatat(AT_FDCWD, path.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        return failed("stat", path, nullptr, errno);
      }
      r.type = type_char(st.st_mode);
      r.size = uint64_t(st.st_size);
      r.mode = st.st_mode & 07777;
      break;
    }
  }
  r.ok = true;
  return r;
}

const char* op_name(FileRequest::Op op) {
  switch (op) {
    case FileRequest::Read:
      return "read";
    case FileRequest::Write:
      return "write";
    case FileRequest::List:
      return "list";
    case FileRequest::Stat:
      return "stat";
  }
  return "file";
}

// Which layer refused: access(2) sees the file's mode and a read-only mount but not Landlock,
// so an EACCES that access() does not reproduce is Landlock's.
std::optional<Denial> classify_refusal(FileRequest::Op op, const std::string& path, int err) {
  if (err == EROFS) {
    return Denial{"mount", op_name(op), path, "read-only mount", EROFS};
  }
  if (err != EACCES) return std::nullopt;
  std::string target = path;
  int mode = op == FileRequest::Write ? W_OK : op == FileRequest::List ? R_OK | X_OK : R_OK;
  if (op == FileRequest::Stat) mode = F_OK;
  if (op == FileRequest::Write && ::faccessat(AT_FDCWD, path.c_str(), F_OK, AT_EACCESS) != 0) {
    // A new file: creating it is a write to its directory.
    const size_t slash = path.find_last_of('/');
    target = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
    mode = W_OK | X_OK;
  }
  if (::faccessat(AT_FDCWD, target.c_str(), mode, AT_EACCESS) == 0) {
    return Denial{"landlock", op_name(op), path,
                  "refused by Landlock (the file's mode and the mount allow it)", EACCES};
  }
  return Denial{"permissions", op_name(op), path,
                "refused by the file's mode (a no-peek path is an empty mode-0 file)", EACCES};
}

}  // namespace

FileResult perform_file_op(FileRequest::Op op, const std::string& path, uint64_t max_bytes,
                           int data_fd) {
  FileResult r = run_file_op(op, path, max_bytes, data_fd);
  if (!r.ok) {
    if (auto d = classify_refusal(op, path, r.err)) r.denials.push_back(*d);
  }
  return r;
}

std::string encode_file_result(const FileResult& r) {
  wire::Writer w;
  w.u64(r.ok).u64(uint64_t(r.err)).str(r.error).str(r.data).u64(r.truncated);
  w.u64(r.entries.size());
  for (const auto& [name, t] : r.entries)
    w.str(name).u64(uint64_t(t));
  w.u64(uint64_t(r.type)).u64(r.size).u64(r.mode);
  w.u64(r.denials.size());
  for (const auto& d : r.denials)
    w.str(d.layer).str(d.op).str(d.path).str(d.detail).u64(uint64_t(d.err));
  return w.bytes();
}

FileResult decode_file_result(const std::string& payload) {
  wire::Reader rd(payload);
  FileResult r;
  r.ok = rd.u64();
  r.err = int(rd.u64());
  r.error = rd.str();
  r.data = rd.str();
  r.truncated = rd.u64();
  uint64_t n = rd.u64();
  for (uint64_t i = 0; i < n && i < payload.size(); ++i) {
    std::string name = rd.str();
    r.entries.emplace_back(name, char(rd.u64()));
  }
  r.type = char(rd.u64());
  r.size = rd.u64();
  r.mode = uint32_t(rd.u64());
  n = rd.u64();
  for (uint64_t i = 0; i < n && i < payload.size(); ++i) {
    Denial d;
    d.layer = rd.str();
    d.op = rd.str();
    d.path = rd.str();
    d.detail = rd.str();
    d.err = int(rd.u64());
    r.denials.push_back(std::move(d));
  }
  return r;
}

}  // namespace kd::sandbox
