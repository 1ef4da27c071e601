#include "common/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

#include "common/errors.h"

namespace kd {
namespace {

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

void write_all(int fd, std::string_view data, const std::string& what) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_sys("write", what, errno);
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
}

}  // namespace

std::string read_file(const std::filesystem::path& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  // A path that is not there (or not a file) is the caller's input, not a failure of ours.
  if (fd.get() < 0) throw_open(quote(path.string()), errno);
  std::string out;
  struct stat st {};
  if (::fstat(fd.get(), &st) == 0 && st.st_size > 0) out.reserve(static_cast<size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EISDIR) throw InputError(sys_message("read", quote(path.string()), EISDIR));
      throw_sys("read", quote(path.string()), errno);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

namespace {

// Writes a temporary sibling (synced when `durable`) and renames it over `path`.
void write_and_rename(const std::filesystem::path& path, std::string_view data, bool durable) {
  // A name of this call's own, created afresh: two threads writing one path never share (and
  // truncate) a temporary file, and nothing planted under the name is followed.
  static std::atomic<unsigned long> seq{0};
  std::filesystem::path tmp = path;
  tmp += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(seq.fetch_add(1));
  {
    const int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
    int raw = ::open(tmp.c_str(), flags, 0644);
    if (raw < 0 && errno == EEXIST && ::unlink(tmp.c_str()) == 0)  // a crashed writer's
      raw = ::open(tmp.c_str(), flags, 0644);
    Fd fd(raw);
    if (fd.get() < 0) throw_sys("open", quote(tmp.string()), errno);
    write_all(fd.get(), data, quote(tmp.string()));
    if (durable && ::fsync(fd.get()) != 0) throw_sys("fsync", quote(tmp.string()), errno);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    throw_sys("rename", quote(tmp.string()) + " -> " + quote(path.string()), err);
  }
}

}  // namespace

void write_file_replace(const std::filesystem::path& path, std::string_view data) {
  write_and_rename(path, data, false);
}

void write_file_atomic(const std::filesystem::path& path, std::string_view data) {
  write_and_rename(path, data, true);
  std::filesystem::path dir = path.parent_path().empty() ? "." : path.parent_path();
  Fd dfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dfd.get() < 0 || ::fsync(dfd.get()) != 0) throw_sys("fsync", quote(dir.string()), errno);
}

}  // namespace kd
