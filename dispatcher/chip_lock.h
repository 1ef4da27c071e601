// Chip locks (DESIGN §7): flock(2) on each chip's lock file, so kdispatch and people running
// `flock /tmp/tpu-chip-N.lock ...` by hand respect each other, and a crashed holder releases.
#pragma once

// Boost 1.74 awaitable.hpp uses std::exchange without including <utility>.
#include <utility>

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <optional>
#include <string>

#include "common/chips.h"

namespace kd::dispatcher {

class ChipLock {
 public:
  ChipLock(ChipLock&& other) noexcept;
  ChipLock& operator=(ChipLock&& other) noexcept;
  ChipLock(const ChipLock&) = delete;
  ChipLock& operator=(const ChipLock&) = delete;
  ~ChipLock();

  // Takes the lock now or returns nullopt when another process holds it.
  // Throws kd::Error when the lock file cannot be opened.
  static std::optional<ChipLock> try_acquire(const Chip& chip);

  // Waits for the lock without blocking the I/O thread (polls with a short timer: flock has no
  // readiness notification).
  static boost::asio::awaitable<ChipLock> acquire(
      const Chip& chip, std::chrono::milliseconds poll = std::chrono::milliseconds(20));

  const std::string& chip_id() const { return chip_id_; }

 private:
  ChipLock(int fd, std::string chip_id) : fd_(fd), chip_id_(std::move(chip_id)) {}
  int fd_ = -1;
  std::string chip_id_;
};

}  // namespace kd::dispatcher
