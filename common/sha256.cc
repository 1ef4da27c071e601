#include "common/sha256.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <cerrno>
#include <new>

#include "common/errors.h"

namespace kd {

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  if (!ctx_ || EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(ctx_), EVP_sha256(), nullptr) != 1) {
    throw std::bad_alloc();
  }
}

Sha256::~Sha256() {
  EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_));
}

void Sha256::update(std::string_view bytes) {
  EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_), bytes.data(), bytes.size());
}

Digest Sha256::finish() {
  Digest out{};
  unsigned int len = 0;
  auto* ctx = static_cast<EVP_MD_CTX*>(ctx_);
  EVP_DigestFinal_ex(ctx, out.data(), &len);
  EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr);
  return out;
}

Digest sha256(std::string_view bytes) {
  Digest out{};
  unsigned int len = 0;
  EVP_Digest(bytes.data(), bytes.size(), out.data(), &len, EVP_sha256(), nullptr);
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
