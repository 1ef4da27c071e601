// Writes a session's transcript.jsonl (docs/transcripts.md): hash-chained records sealed with
// common/transcript_chain.h, secrets redacted before sealing, contents over 64 KiB stored as
// blobs/<sha256> beside the transcript and referenced. Every record is fdatasync'ed before
// append() returns, so a crash loses at most the record being written and the chain on disk
// always ends at a complete line.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kd::agents {

inline constexpr size_t kBlobThreshold = 64 * 1024;

class TranscriptWriter {
 public:
  // Creates `dir`/transcript.jsonl; refuses an existing file (a transcript is never reopened
  // for writing by a new session). `secrets` are redacted in addition to provider keys and the
  // values of environment variables named like *KEY*, *TOKEN*, *SECRET*.
  TranscriptWriter(std::filesystem::path dir, std::string session, std::string role,
                   std::vector<std::string> secrets = {});
  ~TranscriptWriter();
  TranscriptWriter(const TranscriptWriter&) = delete;
  TranscriptWriter& operator=(const TranscriptWriter&) = delete;

  // Appends one record and returns its hash (the new chain head).
  std::string append(const std::string& type, nlohmann::json data);

  const std::string& head() const { return head_; }
  std::uint64_t records() const { return seq_; }
  std::filesystem::path path() const { return dir_ / "transcript.jsonl"; }

  // Replaces every secret in every string of `j` by [REDACTED].
  void redact(nlohmann::json& j) const;

 private:
  void store_large(nlohmann::json& data, const char* field);

  std::filesystem::path dir_;
  std::string session_, role_;
  std::vector<std::string> secrets_;
  int fd_ = -1;
  std::uint64_t seq_ = 0;
  std::string head_;
};

// RFC 3339 UTC timestamp with milliseconds.
std::string utc_now_rfc3339();

}  // namespace kd::agents
