#include "verify/worker_wire.h"

#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/errors.h"

namespace kd::verify {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

int ms_left(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return left.count() <= 0 ? 0 : int(std::min<long long>(left.count(), 100));
}

void write_all(int fd, const char* data, std::size_t n, Clock::time_point deadline,
               const std::string& what) {
  while (n > 0) {
    ssize_t k = ::write(fd, data, n);
    if (k > 0) {
      data += k;
      n -= std::size_t(k);
      continue;
    }
    if (k < 0 && errno == EINTR) continue;
    if (k < 0 && errno != EAGAIN) throw_sys("write", what + " request pipe", errno);
    if (Clock::now() >= deadline) throw Error("write(" + what + " request pipe): timed out");
    pollfd p{fd, POLLOUT, 0};
    ::poll(&p, 1, ms_left(deadline));
  }
}

void read_all(int fd, char* data, std::size_t n, Clock::time_point deadline,
              const std::function<bool()>& alive, const std::string& what) {
  while (n > 0) {
    ssize_t k = ::read(fd, data, n);
    if (k > 0) {
      data += k;
      n -= std::size_t(k);
      continue;
    }
    if (k < 0 && errno == EINTR) continue;
    if (k < 0 && errno != EAGAIN) throw_sys("read", what + " reply pipe", errno);
    if (Clock::now() >= deadline) throw Error("read(" + what + " reply pipe): timed out");
    // The parent keeps a writer of the reply pipe open, so a dead worker shows as silence.
    if (k == 0 || !alive()) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 0) <= 0 && !alive())
        throw Error("read(" + what + " reply pipe): the worker ended before answering");
    }
    pollfd p{fd, POLLIN, 0};
    ::poll(&p, 1, ms_left(deadline));
  }
}

std::size_t dtype_size(const std::string& d) {
  if (d.size() < 3) return 0;
  const char order = d[0], kind = d[1];
  if (order != '<' && order != '|' && order != '=') return 0;
  if (kind != 'f' && kind != 'i' && kind != 'u' && kind != 'b') return 0;
  const std::string width = d.substr(2);
  if (width == "1") return 1;
  if (width == "2") return 2;
  if (width == "4") return 4;
  if (width == "8") return 8;
  return 0;
}

}  // namespace

std::size_t WireArray::itemsize() const {
  return dtype_size(dtype);
}

std::size_t WireArray::count() const {
  std::size_t n = 1;
  for (auto d : shape)
    n *= std::size_t(d);
  return n;
}

void write_header(int fd, const json& header, Clock::time_point deadline, const std::string& what) {
  const std::string text = header.dump();
  const std::uint32_t len = std::uint32_t(text.size());
  std::string frame = {char(len & 0xff), char((len >> 8) & 0xff), char((len >> 16) & 0xff),
                       char((len >> 24) & 0xff)};
  frame += text;
  write_all(fd, frame.data(), frame.size(), deadline, what);
}

json read_header(int fd, Clock::time_point deadline, const std::function<bool()>& alive,
                 const std::string& what) {
  unsigned char prefix[4];
  read_all(fd, reinterpret_cast<char*>(prefix), 4, deadline, alive, what);
  const std::uint32_t len = std::uint32_t(prefix[0]) | (std::uint32_t(prefix[1]) << 8) |
                            (std::uint32_t(prefix[2]) << 16) | (std::uint32_t(prefix[3]) << 24);
  if (len > kMaxHeaderBytes)
    throw Error(what + " sent a header of " + std::to_string(len) + " bytes (limit " +
                std::to_string(kMaxHeaderBytes) + ")");
  std::string text(len, '\0');
  read_all(fd, text.data(), len, deadline, alive, what);
  json h = json::parse(text, nullptr, false);
  if (!h.is_object()) throw Error(what + " sent a header that is not a JSON object");
  return h;
}

json put_arrays(int data_fd, const std::vector<WireArray>& arrays, std::size_t base,
                std::size_t& end, const std::string& what) {
  json specs = json::array();
  std::size_t at = base;
  for (const auto& a : arrays) {
    at = (at + kArrayAlign - 1) / kArrayAlign * kArrayAlign;
    std::size_t done = 0;
    while (done < a.bytes.size()) {
      ssize_t k = ::pwrite(data_fd, a.bytes.data() + done, a.bytes.size() - done, off_t(at + done));
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) throw_sys("pwrite", what + " data file", errno);
      done += std::size_t(k);
    }
    specs.push_back({{"dtype", a.dtype}, {"shape", a.shape}, {"offset", at}});
    at += a.bytes.size();
  }
  end = at;
  return specs;
}

void get_arrays(int data_fd, const json& specs, const std::string& what,
                std::vector<WireArray>& out) {
  if (!specs.is_array()) throw Error(what + " sent an arrays field that is not a list");
  struct stat st {};
  if (::fstat(data_fd, &st) != 0) throw_sys("fstat", what + " data file", errno);
  const std::size_t file_size = std::size_t(st.st_size);
  out.resize(specs.size());
  std::size_t total = 0;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const json& s = specs[i];
    WireArray& a = out[i];
    if (!s.is_object() || !s.contains("dtype") || !s["dtype"].is_string() || !s.contains("shape") ||
        !s["shape"].is_array() || !s.contains("offset") || !s["offset"].is_number_unsigned())
      throw Error(what + " sent an array without dtype, shape and offset: " + s.dump());
    a.dtype = s["dtype"].get<std::string>();
    if (a.itemsize() == 0) throw Error(what + " sent an array of dtype " + quote(a.dtype));
    std::size_t n = a.itemsize();
    a.shape.clear();
    for (const auto& d : s["shape"]) {
      if (!d.is_number_integer() || d.get<std::int64_t>() < 0 ||
          d.get<std::int64_t>() > std::int64_t(kMaxPayloadBytes))
        throw Error(what + " sent a bad shape: " + s.dump());
      a.shape.push_back(d.get<std::int64_t>());
      n *= std::size_t(a.shape.back());
      if (n > kMaxPayloadBytes) throw Error(what + " sent an array over the payload limit");
    }
    total += n;
    if (total > kMaxPayloadBytes) throw Error(what + " sent arrays over the payload limit");
    const std::size_t off = s["offset"].get<std::size_t>();
    if (off > file_size || n > file_size - off)
      throw Error(what + " described an array beyond its data file: " + s.dump());
    a.bytes.resize(n);
    std::size_t done = 0;
    while (done < n) {
      ssize_t k = ::pread(data_fd, a.bytes.data() + done, n - done, off_t(off + done));
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) throw_sys("pread", what + " data file", k < 0 ? errno : EIO);
      done += std::size_t(k);
    }
  }
}

}  // namespace kd::verify
