#include "agents/transcript_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>

#include "agents/api_keys.h"
#include "common/errors.h"
#include "common/files.h"
#include "common/sha256.h"
#include "common/transcript_chain.h"

extern char** environ;

namespace kd::agents {
namespace {

// Short values (flags like "1") are not worth redacting and would shred unrelated text.
constexpr size_t kMinSecretLength = 8;

void replace_all(std::string& s, const std::string& what) {
  for (size_t pos = s.find(what); pos != std::string::npos; pos = s.find(what, pos + 10)) {
    s.replace(pos, what.size(), "[REDACTED]");
  }
}

}  // namespace

std::string utc_now_rfc3339() {
  auto now = std::chrono::system_clock::now();
  std::time_t t = std::chrono::system_clock::to_time_t(now);
  long ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
  return buf;
}

TranscriptWriter::TranscriptWriter(std::filesystem::path dir, std::string session, std::string role,
                                   std::vector<std::string> secrets)
    : dir_(std::move(dir)),
      session_(std::move(session)),
      role_(std::move(role)),
      secrets_(std::move(secrets)) {
  for (auto& k : known_secrets())
    secrets_.push_back(k);
  for (char** e = environ; *e; ++e) {
    std::string_view kv(*e);
    size_t eq = kv.find('=');
    if (eq == std::string_view::npos) continue;
    if (is_secret_env_name(std::string(kv.substr(0, eq)))) secrets_.emplace_back(kv.substr(eq + 1));
  }
  std::erase_if(secrets_, [](const std::string& s) { return s.size() < kMinSecretLength; });
  // Longest first, so a secret containing another is replaced whole.
  std::sort(secrets_.begin(), secrets_.end(),
            [](const auto& a, const auto& b) { return a.size() > b.size(); });

  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) throw Error("create_directories(" + quote(dir_.string()) + "): " + ec.message());
  std::string p = path().string();
  fd_ = ::open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) throw_sys("open", p + ", O_CREAT|O_EXCL|O_APPEND", errno);
  head_ = std::string(kZeroHash);
}

TranscriptWriter::~TranscriptWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void TranscriptWriter::redact(nlohmann::json& j) const {
  if (j.is_string()) {
    std::string& s = j.get_ref<std::string&>();
    for (const auto& secret : secrets_)
      replace_all(s, secret);
  } else if (j.is_array() || j.is_object()) {
    for (auto& v : j)
      redact(v);
  }
}

void TranscriptWriter::store_large(nlohmann::json& data, const char* field) {
  if (!data.is_object() || !data.contains(field)) return;
  nlohmann::json& v = data[field];
  std::string bytes = v.is_string() ? v.get<std::string>() : v.dump();
  if (bytes.size() <= kBlobThreshold) return;
  std::string digest = sha256_hex(bytes);
  std::filesystem::path blob = dir_ / "blobs" / digest;
  if (!std::filesystem::exists(blob)) {
    std::filesystem::create_directories(blob.parent_path());
    write_file_atomic(blob, bytes);
  }
  data.erase(field);
  data[std::string(field) + "_ref"] = digest;
  data[std::string(field) + "_bytes"] = bytes.size();
}

std::string TranscriptWriter::append(const std::string& type, nlohmann::json data) {
  redact(data);
  store_large(data, "content");
  store_large(data, "body");
  // Tool output may hold invalid UTF-8; it is replaced (U+FFFD) rather than failing the record.
  ChainRecord r{seq_,
                head_,
                utc_now_rfc3339(),
                session_,
                role_,
                type,
                data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)};
  std::string hash;
  std::string line = seal_chain_line(r, &hash);
  line += '\n';
  for (size_t off = 0; off < line.size();) {
    ssize_t n = ::write(fd_, line.data() + off, line.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_sys("write", path().string(), errno);
    }
    off += static_cast<size_t>(n);
  }
  if (::fdatasync(fd_) != 0) throw_sys("fdatasync", path().string(), errno);
  ++seq_;
  head_ = hash;
  return hash;
}

}  // namespace kd::agents
