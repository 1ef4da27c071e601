// Linear request records (docs/transcripts.md): a `request` record holds what changed since the
// previous request of the same transcript (messages kept, messages appended, the other fields
// when they changed) and the sha256 of the whole body as sent, so that the transcript grows with
// the turns, not with their square, and every body stays reconstructible. The session writes
// them with request_delta(); resume, `transcript verify` and anyone else replay them with
// RequestRebuilder.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

namespace kd::contract::transcript {

// The body's bytes as the digest covers them: compact, invalid UTF-8 replaced (as the
// transcript stores it).
std::string request_bytes(const nlohmann::json& body);
std::string request_digest(const nlohmann::json& body);

// {"keep": K, "append": [...], "marks": [[message, block, cache_control]...] (when any),
// "fields": {...} (only when they changed), "sha256": ...}:
// `previous` is the last body recorded (null for the first request of the transcript).
nlohmann::json request_delta(const nlohmann::json& previous, const nlohmann::json& body);

class RequestRebuilder {
 public:
  // Reads a stored blob by digest (the writer moves large `append` arrays to blobs).
  using BlobReader = std::function<std::string(const std::string& digest)>;
  explicit RequestRebuilder(BlobReader blobs) : blobs_(std::move(blobs)) {}

  // Folds one request record's data and returns the full body. Records written before linear
  // transcripts (a whole `body` or `body_ref`) restart the replay. Throws std::runtime_error
  // naming what does not fit: keeping more messages than the previous body had, fields never
  // given, a body whose digest differs from the recorded sha256.
  nlohmann::json apply(const nlohmann::json& data);

 private:
  BlobReader blobs_;
  nlohmann::json last_ = nullptr;
};

}  // namespace kd::contract::transcript
