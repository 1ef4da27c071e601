// Receipts only the measuring parent can write (docs/receipts.md): an HMAC-SHA256 over the
// receipt's canonical form, keyed by a secret kept in the dispatcher's state directory and never
// bound into any box. The self-hash says a receipt was not edited; the signature says who wrote
// it. kgate's fields and self_sha256 stay as they are, so tools that know nothing of signatures
// still read a signed receipt.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace kd::contract {

inline constexpr std::string_view kSignatureField = "kdispatch_signature";
inline constexpr std::string_view kSignatureAlgorithm = "hmac-sha256";

// HMAC-SHA256 (RFC 2104) of `message` under `key`, as 64 lowercase hex digits.
std::string hmac_sha256_hex(std::string_view key, std::string_view message);
// The raw 32 bytes.
std::string hmac_sha256(std::string_view key, std::string_view message);

// The signing key at `path`: made (32 random bytes, mode 0600, its directory 0700) when absent.
// Throws kd::Error naming the call and the path.
std::string load_or_create_signing_key(const std::filesystem::path& path);
// The key at `path` when the file exists; throws kd::Error for an unreadable or short one.
std::optional<std::string> load_signing_key(const std::filesystem::path& path);
// Where the dispatcher keeps the key: <run-root>/.kdispatch/receipt.key.
std::filesystem::path signing_key_path(const std::filesystem::path& run_root);
// A short public name for a key (the first 16 hex digits of sha256 over it), so a receipt says
// which key signed it without saying anything usable about the key.
std::string key_id(std::string_view key);

// Signs receipt text (a JSON object, without self_sha256): adds the signature field and the
// self_sha256 over everything, and returns the text to write (canonical: keys sorted). An empty
// key seals without signing.
std::string sign_and_seal_receipt(std::string_view unsealed_json, std::string_view key);

struct SignatureCheck {
  bool present = false;  // the receipt carries a signature field
  bool ok = false;       // present, and it matches under the key
  std::string problem;   // why not, when present and !ok
};
// Checks the signature of receipt text under `key`.
SignatureCheck check_receipt_signature(std::string_view receipt_text, std::string_view key);

}  // namespace kd::contract
