#include "dispatcher/chip_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cerrno>

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

std::optional<ChipLock> ChipLock::try_acquire(const Chip& chip) {
  // O_CLOEXEC: a sandboxed child must never inherit (and so keep) a chip lock.
  int fd = ::open(chip.lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) throw_sys("open", quote(chip.lock.string()), errno);
  for (;;) {
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return ChipLock(fd, chip.id);
    if (errno == EINTR) continue;
    int err = errno;
    ::close(fd);
    if (err == EWOULDBLOCK) return std::nullopt;
    throw_sys("flock", quote(chip.lock.string()) + ", LOCK_EX|LOCK_NB", err);
  }
}

boost::asio::awaitable<ChipLock> ChipLock::acquire(const Chip& chip,
                                                   std::chrono::milliseconds poll) {
  boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor);
  for (;;) {
    if (auto lock = try_acquire(chip)) co_return std::move(*lock);
    timer.expires_after(poll);
    co_await timer.async_wait(boost::asio::use_awaitable);
  }
}

}  // namespace kd::dispatcher
