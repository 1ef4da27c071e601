#include "audit/line_reader.h"

#include <zstd.h>

#include <cerrno>
#include <cstring>

#include "common/errors.h"

namespace kd::audit {

namespace {
constexpr size_t kChunk = 1 << 20;
}

struct LineReader::Zstd {
  ZSTD_DStream* stream = ZSTD_createDStream();
  ZSTD_inBuffer in{nullptr, 0, 0};
  ~Zstd() { ZSTD_freeDStream(stream); }
};

LineReader::LineReader(const std::filesystem::path& path) : path_(path) {
  file_ = std::fopen(path.c_str(), "rb");
  if (!file_) throw_sys("fopen", path.string(), errno);
  if (path.extension() == ".zst") {
    zstd_ = std::make_unique<Zstd>();
    if (!zstd_->stream) throw Error("ZSTD_createDStream(" + path.string() + "): out of memory");
    ZSTD_initDStream(zstd_->stream);
  }
}

LineReader::~LineReader() {
  if (file_) std::fclose(file_);
}

bool LineReader::fill() {
  if (eof_) return false;
  size_t old = buf_.size();
  if (!zstd_) {
    buf_.resize(old + kChunk);
    size_t n = std::fread(buf_.data() + old, 1, kChunk, file_);
    buf_.resize(old + n);
    if (n == 0) {
      if (std::ferror(file_)) throw_sys("fread", path_.string(), errno);
      eof_ = true;
      return false;
    }
    bytes_ += n;
    return true;
  }
  for (;;) {
    if (zstd_->in.pos == zstd_->in.size) {
      raw_.resize(kChunk);
      size_t n = std::fread(raw_.data(), 1, kChunk, file_);
      if (n == 0) {
        if (std::ferror(file_)) throw_sys("fread", path_.string(), errno);
        eof_ = true;
        return false;
      }
      zstd_->in = {raw_.data(), n, 0};
    }
    buf_.resize(old + kChunk);
    ZSTD_outBuffer out{buf_.data() + old, kChunk, 0};
    size_t rc = ZSTD_decompressStream(zstd_->stream, &out, &zstd_->in);
    buf_.resize(old + out.pos);
    if (ZSTD_isError(rc))
      throw Error("ZSTD_decompressStream(" + path_.string() + "): " + ZSTD_getErrorName(rc));
    if (out.pos > 0) {
      bytes_ += out.pos;
      return true;
    }
  }
}

bool LineReader::next(std::string_view* line) {
  for (;;) {
    const char* base = buf_.data() + start_;
    size_t avail = buf_.size() - start_;
    if (const void* nl = std::memchr(base + scanned_, '\n', avail - scanned_)) {
      size_t len = static_cast<const char*>(nl) - base;
      *line = std::string_view(base, len);
      start_ += len + 1;
      scanned_ = 0;
      ++line_no_;
      return true;
    }
    scanned_ = avail;
    // Drop consumed bytes before reading more, so the buffer holds at most one line plus a chunk.
    if (start_ > 0) {
      buf_.erase(0, start_);
      start_ = 0;
    }
    if (!fill()) {
      if (buf_.empty()) return false;
      torn_ = true;
      *line = std::string_view(buf_);
      start_ = buf_.size();
      scanned_ = 0;
      ++line_no_;
      return true;
    }
  }
}

}  // namespace kd::audit
