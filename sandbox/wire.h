// The byte format of requests to the box's pid 1 and of the frames it and its children send
// back: length-prefixed fields, nothing that needs a parser library after fork.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kd::sandbox::wire {

class Writer {
 public:
  Writer& u64(uint64_t v);
  Writer& str(const std::string& s);
  Writer& strs(const std::vector<std::string>& v);
  const std::string& bytes() const { return out_; }

 private:
  std::string out_;
};

// Throws kd::Error("box: malformed message") when the input runs short.
class Reader {
 public:
  explicit Reader(const std::string& in) : in_(in) {}
  uint64_t u64();
  std::string str();
  std::vector<std::string> strs();
  size_t left() const { return in_.size() - pos_; }
  bool at_end() const { return pos_ == in_.size(); }

 private:
  const std::string& in_;
  size_t pos_ = 0;
};

// Frames on a stream: one type byte, a 32-bit length, the payload.
// Status: from the box's pid 1 (the child's wait status, timed out); CommandStatus: the
// command's own wait status, from the init of its pid namespace. Denials: what the seccomp
// filter refused, from the command's supervisor (seccomp_notify.h), before its status.
enum class Frame : char {
  Status = 'S',
  CommandStatus = 'C',
  SetupError = 'E',
  FileResult = 'F',
  Denials = 'D'
};
bool write_frame(int fd, Frame type, const std::string& payload);  // false on a write error
// Splits complete frames off the front of `buffer`.
bool next_frame(std::string& buffer, Frame& type, std::string& payload);

}  // namespace kd::sandbox::wire
