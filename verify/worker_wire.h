// The measuring parent's side of the worker protocol (workers/kd-pyworker documents it): small
// length-prefixed JSON headers over a pipe, the arrays they describe in a data file both sides
// share, at the offsets the header gives. A call is then one wake-up each way, whatever the
// arrays' size, so scheduling noise on a busy host stays small against the work measured. The
// parent reads every header with a deadline and checks every array against caps, so a worker
// that stalls, floods or lies about sizes costs a bounded wait and a clear error, never a hang.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kd::verify {

// One array as it travels: numpy's dtype string ("<f4", "<f8", "<i4", "|u1", ...), its shape
// and its bytes in C order.
struct WireArray {
  std::string dtype;
  std::vector<std::int64_t> shape;
  std::string bytes;

  std::size_t itemsize() const;  // 0 for a dtype the parent does not know
  std::size_t count() const;     // product of shape
};

struct Frame {
  nlohmann::json header;
  std::vector<WireArray> arrays;
};

// Where arrays start in the data file: aligned for any dtype.
inline constexpr std::size_t kArrayAlign = 64;

// Largest header and largest total payload the parent accepts from a worker.
inline constexpr std::size_t kMaxHeaderBytes = 1 << 20;
inline constexpr std::size_t kMaxPayloadBytes = std::size_t(2) << 30;

// Writes a header frame (a 4-byte little-endian length and the JSON). Throws kd::Error naming
// `what` (the worker) when the pipe is gone or the deadline passes.
void write_header(int fd, const nlohmann::json& header,
                  std::chrono::steady_clock::time_point deadline, const std::string& what);

// Reads one header frame. `alive` is asked while waiting; a false answer (the worker ended)
// stops the wait. Throws kd::Error naming `what` for a timeout, an early end or a malformed
// frame.
nlohmann::json read_header(int fd, std::chrono::steady_clock::time_point deadline,
                           const std::function<bool()>& alive, const std::string& what);

// Writes `arrays` into the data file from `base` on (each at a 64-byte boundary) and returns
// their descriptions ({dtype, shape, offset}) for a header, and in `end` where they stop.
nlohmann::json put_arrays(int data_fd, const std::vector<WireArray>& arrays, std::size_t base,
                          std::size_t& end, const std::string& what);

// Reads the arrays a header describes from the data file into `out`, checking every dtype, shape
// and offset against the file and the payload cap. `out`'s buffers are reused: a parent that
// reads answers of the same sizes call after call allocates (and page-faults) nothing new.
// Throws kd::Error naming `what`.
void get_arrays(int data_fd, const nlohmann::json& specs, const std::string& what,
                std::vector<WireArray>& out);

}  // namespace kd::verify
