// Chip locks (docs/dispatcher.md): flock(2) on each chip's lock file, so kdispatch and people
// running `flock /tmp/tpu-chip-N.lock ...` by hand respect each other, and a crashed holder
// releases.
#pragma once

// Boost 1.74 awaitable.hpp uses std::exchange without including <utility>.
#include <utility>

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "contract/chips.h"

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
  static std::optional<ChipLock> try_acquire(const contract::Chip& chip);

  // Blocks until the first of `chips` is free (tried in order) and returns it with its index;
  // nullopt once `deadline` passed. `on_wait` runs once, when every chip was found held. flock has
  // no readiness notification: the lock files are opened once and polled every `kPoll`.
  using Deadline = std::optional<std::chrono::steady_clock::time_point>;
  static std::optional<std::pair<ChipLock, size_t>> wait_any(
      const std::vector<contract::Chip>& chips, Deadline deadline,
      const std::function<void()>& on_wait = nullptr);

  // Waits for the lock without blocking the I/O thread, polling on a timer.
  static boost::asio::awaitable<ChipLock> acquire(const contract::Chip& chip);

  static constexpr std::chrono::milliseconds kPoll{5};

  const std::string& chip_id() const { return chip_id_; }

 private:
  ChipLock(int fd, std::string chip_id) : fd_(fd), chip_id_(std::move(chip_id)) {}
  int fd_ = -1;
  std::string chip_id_;
};

}  // namespace kd::dispatcher
