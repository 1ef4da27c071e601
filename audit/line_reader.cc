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

LineReader::LineReader(const std::filesystem::path& path)
    : path_(path), buf_(new char[2 * kChunk]), cap_(2 * kChunk) {
  file_ = std::fopen(path.c_str(), "rb");
  if (!file_) throw_sys("fopen", path.string(), errno);
  if (path.extension() == ".zst") {
    zstd_ = std::make_unique<Zstd>();
    if (!zstd_->stream) throw Error("ZSTD_createDStream(" + path.string() + "): out of memory");
    ZSTD_initDStream(zstd_->stream);
    raw_.reset(new char[kChunk]);
  }
}

LineReader::~LineReader() {
  if (file_) std::fclose(file_);
}

void LineReader::make_room() {
  if (start_ > 0) {
    std::memmove(buf_.get(), buf_.get() + start_, end_ - start_);
    end_ -= start_;
    start_ = 0;
  }
  // Keep at least one chunk free; a line longer than the buffer doubles it.
  if (cap_ - end_ < kChunk) {
    size_t cap = cap_ * 2;
    std::unique_ptr<char[]> bigger(new char[cap]);
    std::memcpy(bigger.get(), buf_.get(), end_);
    buf_ = std::move(bigger);
    cap_ = cap;
  }
}

bool LineReader::fill() {
  if (eof_) return false;
  make_room();
  if (!zstd_) {
    size_t n = std::fread(buf_.get() + end_, 1, cap_ - end_, file_);
    if (n == 0) {
      if (std::ferror(file_)) throw_sys("fread", path_.string(), errno);
      eof_ = true;
      return false;
    }
    end_ += n;
    bytes_ += n;
    return true;
  }
  for (;;) {
    if (zstd_->in.pos == zstd_->in.size) {
      size_t n = std::fread(raw_.get(), 1, kChunk, file_);
      if (n == 0) {
        if (std::ferror(file_)) throw_sys("fread", path_.string(), errno);
        eof_ = true;
        return false;
      }
      zstd_->in = {raw_.get(), n, 0};
    }
    ZSTD_outBuffer out{buf_.get() + end_, cap_ - end_, 0};
    size_t rc = ZSTD_decompressStream(zstd_->stream, &out, &zstd_->in);
    if (ZSTD_isError(rc))
      throw Error("ZSTD_decompressStream(" + path_.string() + "): " + ZSTD_getErrorName(rc));
    if (out.pos > 0) {
      end_ += out.pos;
      bytes_ += out.pos;
      return true;
    }
  }
}

bool LineReader::next(std::string_view* line) {
  for (;;) {
    const char* base = buf_.get() + start_;
    size_t avail = end_ - start_;
    if (const void* nl = std::memchr(base + scanned_, '\n', avail - scanned_)) {
      size_t len = static_cast<const char*>(nl) - base;
      *line = std::string_view(base, len);
      start_ += len + 1;
      scanned_ = 0;
      ++line_no_;
      return true;
    }
    scanned_ = avail;
    if (!fill()) {
      if (end_ == start_) return false;
      torn_ = true;
      *line = std::string_view(buf_.get() + start_, end_ - start_);
      start_ = end_;
      scanned_ = 0;
      ++line_no_;
      return true;
    }
  }
}

}  // namespace kd::audit
