// SHA-256 over OpenSSL's libcrypto (hardware-accelerated where the CPU has SHA extensions).
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace kd {

using Digest = std::array<std::uint8_t, 32>;

class Sha256 {
 public:
  Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  ~Sha256();

  void update(std::string_view bytes);
  Digest finish();  // resets the state for reuse

 private:
  void* ctx_;  // SHA256_CTX*, kept opaque so callers do not include OpenSSL headers
};

Digest sha256(std::string_view bytes);
std::string sha256_hex(std::string_view bytes);
std::string to_hex(const Digest& digest);

// sha256 hex of a file's content, streamed; throws kd::Error naming the path.
std::string sha256_file_hex(const std::filesystem::path& path);

}  // namespace kd
