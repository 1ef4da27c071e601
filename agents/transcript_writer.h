// Writes a session's transcript.jsonl (docs/transcripts.md): hash-chained records sealed with
// common/transcript_chain.h, secrets redacted before sealing, contents over 64 KiB stored as
// blobs/<sha256> beside the transcript and referenced.
//
// append() seals the record at once (seq, prev and the chain head are final when it returns)
// and hands the bytes to a shared pool of disk threads that write and fdatasync them in order,
// several records per sync when they queue up. The caller's thread, usually an Asio I/O thread
// with many streams on it, never waits for the disk; flush() waits for everything appended so
// far to be durable. A blob is durable before any record that references it, and the file on
// disk always ends at a complete line or with one torn line (a crash mid-write).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

namespace kd::agents {

inline constexpr size_t kBlobThreshold = 64 * 1024;

// Where an existing transcript's intact chain ends (transcript_resume.h reads it).
struct ChainTail {
  std::uint64_t records = 0;     // complete, verified lines
  std::string head;              // hash of the last one (64 zeros when there is none)
  std::uint64_t bytes = 0;       // size of those lines, newlines included
  std::uint64_t torn_bytes = 0;  // bytes after them without a newline: a torn last line
};

class TranscriptWriter {
 public:
  // Creates `dir`/transcript.jsonl; refuses an existing file (a new session never reopens a
  // transcript). `secrets` are redacted in addition to provider keys and the values of
  // environment variables named like *KEY*, *TOKEN*, *SECRET*.
  TranscriptWriter(std::filesystem::path dir, std::string session, std::string role,
                   std::vector<std::string> secrets = {});
  // Continues the transcript after `tail` (a resumed session): cuts the torn line, if any, and
  // appends with seq and prev following on. Refuses when the file no longer has the size `tail`
  // was read at (something wrote to it since).
  TranscriptWriter(std::filesystem::path dir, std::string session, std::string role,
                   const ChainTail& tail, std::vector<std::string> secrets = {});
  // Waits for the queued records (errors are lost here; call flush() to see them).
  ~TranscriptWriter();
  TranscriptWriter(const TranscriptWriter&) = delete;
  TranscriptWriter& operator=(const TranscriptWriter&) = delete;

  // Seals one record, queues it for the disk and returns its hash (the new chain head). Never
  // waits for the disk. Throws kd::Error when an earlier write or sync failed: a transcript
  // with a hole is not continued.
  std::string append(const std::string& type, nlohmann::json data);

  // Blocks until every record appended so far is written and fdatasync'ed; throws kd::Error
  // naming the failed call and the file.
  void flush();

  const std::string& head() const { return head_; }
  std::uint64_t records() const { return seq_; }
  std::filesystem::path path() const { return dir_ / "transcript.jsonl"; }

  // Replaces every secret in every string of `j` by [REDACTED].
  void redact(nlohmann::json& j) const;

  struct Queue;  // the file's pending bytes, shared with the disk threads

 private:
  void collect_secrets();
  void open(int flags);
  void store_large(nlohmann::json& data, const char* field);

  std::filesystem::path dir_;
  std::string session_, role_;
  std::vector<std::string> secrets_;
  std::shared_ptr<Queue> queue_;
  std::set<std::string> blobs_;  // digests already queued or on disk
  std::uint64_t seq_ = 0;
  std::string head_;
};

}  // namespace kd::agents
