// Linear request records (docs/transcripts.md): a `request` record holds what changed since the
// previous request of the same transcript (messages kept, messages appended, the other fields
// when they changed) and the sha256 of the whole body as sent, so that the transcript grows with
// the turns, not with their square, and every body stays reconstructible. The session writes
// them with request_delta(); resume, `transcript verify` and anyone else replay them with
// RequestRebuilder.
//
// A tool output is stored once: in its `tool_result` record. A request that sends it again
// holds null in its place and a ref [message, JSON pointer into the message, seq of the
// tool_result record]; the replay puts the record's content back, and the body's sha256 covers
// the result, so an edited output fails the replay.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>

namespace kd::contract::transcript {

// The body's bytes as the digest covers them: compact, invalid UTF-8 replaced (as the
// transcript stores it).
std::string request_bytes(const nlohmann::json& body);
std::string request_digest(const nlohmann::json& body);

// Strings shorter than this are repeated rather than referred to: a ref costs about as much.
inline constexpr size_t kMinRefBytes = 256;

// The tool outputs already recorded: sha256 of a tool_result record's content (as stored,
// redacted) -> that record's seq.
using RecordedOutputs = std::unordered_map<std::string, std::uint64_t>;

// {"keep": K, "append": [...], "refs": [[message, pointer, seq]...] (when any),
// "marks": [[message, block, cache_control]...] (when any), "fields": {...} (only when they
// changed), "sha256": ...}: `previous` is the last body recorded (null for the first request of
// the transcript); every appended string of at least kMinRefBytes found in `outputs` becomes a
// ref.
nlohmann::json request_delta(const nlohmann::json& previous, const nlohmann::json& body,
                             const RecordedOutputs& outputs = {});

class RequestRebuilder {
 public:
  // Reads a stored blob by digest (the writer moves large `append` arrays to blobs).
  using BlobReader = std::function<std::string(const std::string& digest)>;
  explicit RequestRebuilder(BlobReader blobs) : blobs_(std::move(blobs)) {}

  // Takes every record of the transcript in order: remembers tool outputs, returns the full body
  // of a request record (see apply), nothing for other types.
  std::optional<nlohmann::json> feed(std::uint64_t seq, const std::string& type,
                                     const nlohmann::json& data);

  // Remembers the content of the tool_result record `seq` (`content`, or `content_ref` read from
  // its blob when a request refers to it).
  void add_output(std::uint64_t seq, const nlohmann::json& data);

  // Folds one request record's data and returns the full body. Records written before linear
  // transcripts (a whole `body` or `body_ref`) restart the replay. Throws std::runtime_error
  // naming what does not fit: keeping more messages than the previous body had, fields never
  // given, a ref to no earlier tool_result, a body whose digest differs from the recorded sha256.
  nlohmann::json apply(const nlohmann::json& data);

 private:
  struct Output {
    std::string text;  // the content, or the digest of its blob
    bool in_blob = false;
  };
  std::string output(std::uint64_t seq) const;

  BlobReader blobs_;
  nlohmann::json last_ = nullptr;
  std::unordered_map<std::uint64_t, Output> outputs_;
};

}  // namespace kd::contract::transcript
