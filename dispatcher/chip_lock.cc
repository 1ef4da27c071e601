#include "dispatcher/chip_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cerrno>
#include <thread>

#include "common/errors.h"

namespace kd::dispatcher {

ChipLock::ChipLock(ChipLock&& other) noexcept
    : fd_(other.fd_), chip_id_(std::move(other.chip_id_)) {
  other.fd_ = -1;
}

ChipLock& ChipLock::operator=(ChipLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    chip_id_ = std::move(other.chip_id_);
    other.fd_ = -1;
  }
  return *this;
}

ChipLock::~ChipLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor releases the flock
}

namespace {

// The lock files of some chips, opened once (O_CLOEXEC: a sandboxed child must never inherit,
// and so keep, a chip lock) and tried without blocking.
class LockFiles {
 public:
  explicit LockFiles(const std::vector<contract::Chip>& chips) : chips_(chips) {
    for (const auto& c : chips_) {
      int fd = ::open(c.lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
      if (fd < 0) throw_sys("open", quote(c.lock.string()), errno);
      fds_.push_back(fd);
    }
  }
  LockFiles(const LockFiles&) = delete;
  LockFiles& operator=(const LockFiles&) = delete;
  ~LockFiles() {
    for (int fd : fds_) {
      if (fd >= 0) ::close(fd);
    }
  }

  // The first free chip's descriptor, now locked and owned by the caller, and its index.
  std::optional<std::pair<int, size_t>> try_any() {
    for (size_t i = 0; i < fds_.size(); ++i) {
      int r;
      while ((r = ::flock(fds_[i], LOCK_EX | LOCK_NB)) != 0 && errno == EINTR) {
      }
      if (r == 0) return std::pair{std::exchange(fds_[i], -1), i};
      if (errno != EWOULDBLOCK)
        throw_sys("flock", quote(chips_[i].lock.string()) + ", LOCK_EX|LOCK_NB", errno);
    }
    return std::nullopt;
  }

 private:
  const std::vector<contract::Chip>& chips_;
  std::vector<int> fds_;
};

}  // namespace

std::optional<ChipLock> ChipLock::try_acquire(const contract::Chip& chip) {
  std::vector<contract::Chip> one{chip};
  if (auto got = LockFiles(one).try_any()) return ChipLock(got->first, chip.id);
  return std::nullopt;
}

std::optional<std::pair<ChipLock, size_t>> ChipLock::wait_any(
    const std::vector<contract::Chip>& chips, Deadline deadline,
    const std::function<void()>& on_wait) {
  LockFiles files(chips);
  for (bool told = false;; told = true) {
    if (auto got = files.try_any()) {
      return std::pair{ChipLock(got->first, chips[got->second].id), got->second};
    }
    if (deadline && std::chrono::steady_clock::now() > *deadline) return std::nullopt;
    if (!told && on_wait) on_wait();
    std::this_thread::sleep_for(kPoll);
  }
}

boost::asio::awaitable<ChipLock> ChipLock::acquire(const contract::Chip& chip) {
  std::vector<contract::Chip> one{chip};
  LockFiles files(one);
  boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor);
  for (;;) {
    if (auto got = files.try_any()) co_return ChipLock(got->first, chip.id);
    timer.expires_after(kPoll);
    co_await timer.async_wait(boost::asio::use_awaitable);
  }
}

}  // namespace kd::dispatcher
