// Streams the lines of a file, plain or zstd-compressed (`.zst`), with no line-length cap and
// memory bounded by the longest line.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

namespace kd::audit {

class LineReader {
 public:
  // Opens `path`; a name ending in `.zst` is decompressed on the fly. Throws kd::Error.
  explicit LineReader(const std::filesystem::path& path);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // The next line without its newline; valid until the next call. False at the end.
  bool next(std::string_view* line);
  std::uint64_t line_number() const { return line_no_; }  // 1-based number of the last line
  // True when the input ended with bytes after the last newline (a torn last line).
  bool last_line_torn() const { return torn_; }
  std::uint64_t bytes_read() const { return bytes_; }  // input bytes after decompression

 private:
  bool fill();       // appends more decompressed bytes after end_; false at end of input
  void make_room();  // moves the unread bytes to the front, growing the buffer when it is full

  std::filesystem::path path_;
  std::FILE* file_ = nullptr;
  struct Zstd;
  std::unique_ptr<Zstd> zstd_;
  std::unique_ptr<char[]> buf_;  // not a std::string: growing it must not zero-fill
  size_t cap_ = 0;
  size_t start_ = 0;             // start of the unread bytes
  size_t end_ = 0;               // end of the bytes read so far
  size_t scanned_ = 0;           // bytes after start_ known to hold no newline
  std::unique_ptr<char[]> raw_;  // compressed input chunk
  bool eof_ = false;
  bool torn_ = false;
  std::uint64_t line_no_ = 0;
  std::uint64_t bytes_ = 0;
};

}  // namespace kd::audit
