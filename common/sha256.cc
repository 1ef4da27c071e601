#include "common/sha256.h"

#include <fcntl.h>
#include <unistd.h>

// The SHA256_* functions hash with the same accelerated code as EVP without EVP's provider
// lookup at first use, which costs a short-lived command (kdispatch brief) milliseconds.
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>

#include <cerrno>

#include "common/errors.h"

namespace kd {

Sha256::Sha256() : ctx_(new SHA256_CTX) {
  SHA256_Init(static_cast<SHA256_CTX*>(ctx_));
}

Sha256::~Sha256() {
  delete static_cast<SHA256_CTX*>(ctx_);
}

void Sha256::update(std::string_view bytes) {
  SHA256_Update(static_cast<SHA256_CTX*>(ctx_), bytes.data(), bytes.size());
}

Digest Sha256::finish() {
  Digest out{};
  auto* ctx = static_cast<SHA256_CTX*>(ctx_);
  SHA256_Final(out.data(), ctx);
  SHA256_Init(ctx);
  return out;
}

Digest sha256(std::string_view bytes) {
  Digest out{};
  SHA256_CTX ctx;
  SHA256_Init(&ctx);
  SHA256_Update(&ctx, bytes.data(), bytes.size());
  SHA256_Final(out.data(), &ctx);
  return out;
}

std::string to_hex(const Digest& digest) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(64, '0');
  for (size_t i = 0; i < digest.size(); ++i) {
    out[2 * i] = kHex[digest[i] >> 4];
    out[2 * i + 1] = kHex[digest[i] & 0xf];
  }
  return out;
}

std::string sha256_hex(std::string_view bytes) {
  return to_hex(sha256(bytes));
}

std::string sha256_file_hex(const std::filesystem::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw_sys("open", quote(path.string()), errno);
  Sha256 h;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      throw_sys("read", quote(path.string()), err);
    }
    if (n == 0) break;
    h.update(std::string_view(buf, static_cast<size_t>(n)));
  }
  ::close(fd);
  return to_hex(h.finish());
}

}  // namespace kd
