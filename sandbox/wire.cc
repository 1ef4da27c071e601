#include "sandbox/wire.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/errors.h"

namespace kd::sandbox::wire {

Writer& Writer::u64(uint64_t v) {
  out_.append(reinterpret_cast<const char*>(&v), sizeof v);
  return *this;
}

Writer& Writer::str(const std::string& s) {
  u64(s.size());
  out_ += s;
  return *this;
}

Writer& Writer::strs(const std::vector<std::string>& v) {
  u64(v.size());
  for (const auto& s : v)
    str(s);
  return *this;
}

uint64_t Reader::u64() {
  uint64_t v;
  if (in_.size() - pos_ < sizeof v) throw Error("box: malformed message (short integer)");
  std::memcpy(&v, in_.data() + pos_, sizeof v);
  pos_ += sizeof v;
  return v;
}

std::string Reader::str() {
  uint64_t n = u64();
  if (in_.size() - pos_ < n) throw Error("box: malformed message (short string)");
  std::string s = in_.substr(pos_, n);
  pos_ += n;
  return s;
}

std::vector<std::string> Reader::strs() {
  uint64_t n = u64();
  if (n > in_.size()) throw Error("box: malformed message (bad count)");
  std::vector<std::string> v;
  for (uint64_t i = 0; i < n; ++i)
    v.push_back(str());
  return v;
}

bool write_frame(int fd, Frame type, const std::string& payload) {
  std::string buf(1, char(type));
  uint32_t n = uint32_t(payload.size());
  buf.append(reinterpret_cast<const char*>(&n), sizeof n);
  buf += payload;
  size_t off = 0;
  while (off < buf.size()) {
    ssize_t w = ::write(fd, buf.data() + off, buf.size() - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    off += size_t(w);
  }
  return true;
}

bool next_frame(std::string& buffer, Frame& type, std::string& payload) {
  if (buffer.size() < 5) return false;
  uint32_t n;
  std::memcpy(&n, buffer.data() + 1, sizeof n);
  if (buffer.size() < 5 + size_t(n)) return false;
  type = Frame(buffer[0]);
  payload = buffer.substr(5, n);
  buffer.erase(0, 5 + size_t(n));
  return true;
}

}  // namespace kd::sandbox::wire
