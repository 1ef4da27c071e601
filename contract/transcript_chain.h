// The hash chain of kdispatch transcripts (docs/transcripts.md), shared by the writer (agents) and
// the verifiers (audit, `kdispatch transcript verify`).
//
// One record per line, fields in this fixed order:
//   {"seq":N,"prev":"<hex>","ts":"...","session":"...","role":"...","type":"...","data":{...},
//    "hash":"<hex>"}
// `hash` is the sha256 of the line's bytes before `,"hash":"`; `prev` is the previous line's
// `hash` (64 zeros for the header, seq 0). The chain head is the last line's hash. The fixed
// order lets a verifier check the chain without parsing `data`; the self-hash makes an edit of
// the last line detectable even without the head stored elsewhere.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace kd::contract {

inline constexpr std::string_view kZeroHash =
    "0000000000000000000000000000000000000000000000000000000000000000";

struct ChainRecord {
  std::uint64_t seq = 0;
  std::string prev;     // hash of the previous line, kZeroHash for seq 0
  std::string ts;       // RFC 3339 UTC timestamp
  std::string session;  // session id
  std::string role;     // author | verifier | ...
  std::string
      type;  // header | request | response | tool_call | tool_result | violation | note | end
  std::string data_json;  // compact JSON object
};

// Serializes and seals a record. Returns the line without its trailing newline; stores the
// line's hash in *hash_hex.
std::string seal_chain_line(const ChainRecord& record, std::string* hash_hex);

struct ChainReport {
  bool ok = false;
  std::uint64_t lines = 0;        // complete lines read
  std::string head;               // hash of the last good line
  std::uint64_t broken_line = 0;  // 1-based; 0 when ok
  std::string reason;             // what is wrong with broken_line
};

// Incremental verifier: feed lines (without newline) in order, then finish().
class ChainVerifier {
 public:
  bool feed(std::string_view line);
  // `last_line_complete` is false when the input ended without a newline after the last line.
  ChainReport finish(bool last_line_complete);
  bool failed() const { return !report_.reason.empty(); }

 private:
  bool fail(std::string reason);

  ChainReport report_;
  std::string last_type_;
};

// Streams a transcript file through ChainVerifier. Memory stays bounded by the longest line.
ChainReport verify_chain_file(const std::filesystem::path& path);

}  // namespace kd::contract
