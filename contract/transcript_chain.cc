#include "contract/transcript_chain.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "common/sha256.h"

namespace kd::contract {
namespace {

constexpr std::string_view kSealKey = ",\"hash\":\"";
constexpr size_t kSealSize = kSealKey.size() + 64 + 2;  // key, hex, closing quote and brace

bool is_hex64(std::string_view s) {
  if (s.size() != 64) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

std::string json_string(const std::string& s) {
  return nlohmann::json(s).dump();
}

}  // namespace

std::string seal_chain_line(const ChainRecord& r, std::string* hash_hex) {
  std::string line = "{\"seq\":" + std::to_string(r.seq) + ",\"prev\":\"" + r.prev +
                     "\",\"ts\":" + json_string(r.ts) + ",\"session\":" + json_string(r.session) +
                     ",\"role\":" + json_string(r.role) + ",\"type\":" + json_string(r.type) +
                     ",\"data\":" + (r.data_json.empty() ? std::string("{}") : r.data_json);
  std::string hash = sha256_hex(line);
  line += kSealKey;
  line += hash;
  line += "\"}";
  if (hash_hex) *hash_hex = std::move(hash);
  return line;
}

bool ChainVerifier::fail(std::string reason) {
  report_.broken_line = report_.lines + 1;
  report_.reason = std::move(reason);
  return false;
}

bool ChainVerifier::feed(std::string_view line) {
  if (failed()) return false;
  if (!line.empty() && line.back() == '\r')
    return fail("carriage return at end of line (rewritten line endings)");
  if (line.size() < kSealSize ||
      line.substr(line.size() - kSealSize, kSealKey.size()) != kSealKey ||
      line.substr(line.size() - 2) != "\"}") {
    return fail("no hash seal at the end of the line");
  }
  std::string_view hash = line.substr(line.size() - 66, 64);
  std::string_view body = line.substr(0, line.size() - kSealSize);
  if (!is_hex64(hash) || sha256_hex(body) != hash) {
    return fail("content does not match its hash (the line was edited)");
  }
  constexpr std::string_view kSeq = "{\"seq\":";
  if (body.substr(0, kSeq.size()) != kSeq) return fail("record does not start with seq");
  std::string_view rest = body.substr(kSeq.size());
  std::uint64_t seq = 0;
  auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), seq);
  if (ec != std::errc() || end == rest.data()) return fail("seq is not a number");
  rest.remove_prefix(static_cast<size_t>(end - rest.data()));
  constexpr std::string_view kPrev = ",\"prev\":\"";
  if (rest.substr(0, kPrev.size()) != kPrev || rest.size() < kPrev.size() + 65 ||
      rest[kPrev.size() + 64] != '"') {
    return fail("record has no prev after seq");
  }
  std::string_view prev = rest.substr(kPrev.size(), 64);
  if (seq != report_.lines) {
    return fail("seq " + std::to_string(seq) + " where " + std::to_string(report_.lines) +
                " was expected (a line was deleted, added or reordered)");
  }
  std::string_view expected_prev = report_.lines == 0 ? kZeroHash : std::string_view(report_.head);
  if (prev != expected_prev) {
    return fail(
        "prev does not match the hash of the line before (a line was deleted, added or reordered)");
  }
  constexpr std::string_view kType = "\"type\":\"";
  size_t t = body.find(kType);
  size_t te = t == std::string_view::npos ? t : body.find('"', t + kType.size());
  if (te == std::string_view::npos) return fail("record has no type");
  std::string_view type = body.substr(t + kType.size(), te - t - kType.size());
  if (report_.lines == 0 && type != "header")
    return fail("first record is \"" + std::string(type) + "\", not a header");
  if (report_.lines > 0 && type == "header") return fail("a second header");
  if (last_type_ == "end") return fail("record after the end record");
  last_type_ = type;
  report_.head = hash;
  ++report_.lines;
  return true;
}

ChainReport ChainVerifier::finish(bool last_line_complete) {
  if (!failed()) {
    if (!last_line_complete) {
      fail("truncated: the last line has no newline");
    } else if (report_.lines == 0) {
      fail("empty transcript: no header");
    } else if (last_type_ != "end") {
      report_.broken_line = report_.lines;
      report_.reason = "ends with a \"" + last_type_ +
                       "\" record, not an end record (truncated, or the session did not finish)";
    }
  }
  report_.ok = !failed();
  return report_;
}

ChainReport verify_chain_file(const std::filesystem::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw_open(quote(path.string()), errno);
  ChainVerifier verifier;
  std::string carry;  // the start of a line that spans reads
  std::string buf(1 << 20, '\0');
  bool complete = true;
  for (;;) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      throw_sys("read", quote(path.string()), err);
    }
    if (n == 0) break;
    std::string_view chunk(buf.data(), static_cast<size_t>(n));
    size_t start = 0;
    for (size_t nl; (nl = chunk.find('\n', start)) != std::string_view::npos; start = nl + 1) {
      if (carry.empty()) {
        verifier.feed(chunk.substr(start, nl - start));
      } else {
        carry.append(chunk.substr(start, nl - start));
        verifier.feed(carry);
        carry.clear();
      }
    }
    carry.append(chunk.substr(start));
    if (verifier.failed()) break;
  }
  ::close(fd);
  if (!carry.empty() && !verifier.failed()) {
    verifier.feed(carry);
    complete = false;
  }
  return verifier.finish(complete);
}

}  // namespace kd::contract
