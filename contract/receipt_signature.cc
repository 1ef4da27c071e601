#include "contract/receipt_signature.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "common/errors.h"
#include "common/fd.h"
#include "common/files.h"
#include "common/sha256.h"
#include "contract/receipt_json.h"

namespace kd::contract {
namespace {

namespace fs = std::filesystem;
using Kind = JsonValue::Kind;

constexpr std::size_t kBlock = 64;
constexpr std::size_t kKeyBytes = 32;

// The canonical text the MAC covers: the receipt without self_sha256 and without the signature.
std::string signed_part(const JsonValue& root) {
  JsonValue rest = root;
  std::erase_if(rest.members,
                [](const auto& m) { return m.key == "self_sha256" || m.key == kSignatureField; });
  return canonical_json(rest);
}

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string hmac_sha256(std::string_view key, std::string_view message) {
  std::string k(key);
  if (k.size() > kBlock) {
    Digest d = sha256(k);
    k.assign(d.begin(), d.end());
  }
  k.resize(kBlock, '\0');
  std::string ipad(kBlock, '\0'), opad(kBlock, '\0');
  for (std::size_t i = 0; i < kBlock; ++i) {
    ipad[i] = char(k[i] ^ 0x36);
    opad[i] = char(k[i] ^ 0x5c);
  }
  Sha256 inner;
  inner.update(ipad);
  inner.update(message);
  Digest id = inner.finish();
  Sha256 outer;
  outer.update(opad);
  outer.update(std::string_view(reinterpret_cast<const char*>(id.data()), id.size()));
  Digest od = outer.finish();
  return std::string(od.begin(), od.end());
}

std::string hmac_sha256_hex(std::string_view key, std::string_view message) {
  std::string raw = hmac_sha256(key, message);
  Digest d;
  std::copy(raw.begin(), raw.end(), d.begin());
  return to_hex(d);
}

fs::path signing_key_path(const fs::path& run_root) {
  return run_root / ".kdispatch/receipt.key";
}

std::string key_id(std::string_view key) {
  return sha256_hex(key).substr(0, 16);
}

std::optional<std::string> load_signing_key(const fs::path& path) {
  if (!fs::exists(path)) return std::nullopt;
  std::string key = read_file(path);
  if (key.size() < kKeyBytes)
    throw Error("receipt signing key " + quote(path.string()) + " holds " +
                std::to_string(key.size()) + " bytes, fewer than " + std::to_string(kKeyBytes));
  return key;
}

std::string load_or_create_signing_key(const fs::path& path) {
  if (auto key = load_signing_key(path)) return *key;
  const fs::path dir = path.parent_path();
  fs::create_directories(dir);
  if (::chmod(dir.c_str(), 0700) != 0) throw_sys("chmod", dir.string(), errno);
  std::string key(kKeyBytes, '\0');
  std::size_t got = 0;
  while (got < key.size()) {
    ssize_t k = ::getrandom(key.data() + got, key.size() - got, 0);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) throw_sys("getrandom", path.string(), errno);
    got += std::size_t(k);
  }
  // A temporary file of this call's own (mkstemp: 0600, O_EXCL), then link: two verifications
  // or dispatchers making the key at once keep the first one's, and none truncates another's.
  std::string tmp = path.string() + ".new.XXXXXX";
  {
    UniqueFd fd(::mkostemp(tmp.data(), O_CLOEXEC));
    if (!fd) throw_sys("mkostemp", tmp, errno);
    const char* failed = ::write(fd.get(), key.data(), key.size()) != ssize_t(key.size()) ? "write"
                         : ::fsync(fd.get()) != 0                                         ? "fsync"
                                                                                          : nullptr;
    const int err = errno;
    if (failed) {
      ::unlink(tmp.c_str());
      throw_sys(failed, tmp, err);
    }
  }
  const bool linked = ::link(tmp.c_str(), path.c_str()) == 0 || errno == EEXIST;
  const int err = errno;
  ::unlink(tmp.c_str());
  if (!linked) throw_sys("link", tmp + " -> " + path.string(), err);
  return *load_signing_key(path);
}

std::string sign_and_seal_receipt(std::string_view unsealed_json, std::string_view key) {
  JsonValue root = parse_receipt_json(unsealed_json);
  if (root.kind != Kind::Object) throw Error("a receipt to sign is not a JSON object");
  // Without a key the receipt is sealed only: intact, but anyone could have written it.
  if (!key.empty()) {
    const std::string mac = hmac_sha256_hex(key, signed_part(root));
    const std::string sig = "{\"alg\":" + json_string(kSignatureAlgorithm) +
                            ",\"key_id\":" + json_string(key_id(key)) +
                            ",\"mac\":" + json_string(mac) + "}";
    root.members.push_back({std::string(kSignatureField), parse_receipt_json(sig)});
  }
  JsonValue rest = root;
  std::erase_if(rest.members, [](const auto& m) { return m.key == "self_sha256"; });
  const std::string self = sha256_hex(canonical_json(rest));
  root.members.push_back({"self_sha256", parse_receipt_json(json_string(self))});
  return canonical_json(root) + "\n";
}

SignatureCheck check_receipt_signature(std::string_view text, std::string_view key) {
  SignatureCheck c;
  JsonValue root;
  try {
    root = parse_receipt_json(text);
  } catch (const Error& e) {
    c.problem = std::string("not a receipt: ") + e.what();
    return c;
  }
  const JsonValue* sig = root.kind == Kind::Object ? root.find(kSignatureField) : nullptr;
  if (!sig) return c;
  c.present = true;
  const JsonValue* alg = sig->kind == Kind::Object ? sig->find("alg") : nullptr;
  const JsonValue* mac = sig->kind == Kind::Object ? sig->find("mac") : nullptr;
  if (!alg || alg->kind != Kind::String || alg->text != kSignatureAlgorithm || !mac ||
      mac->kind != Kind::String) {
    c.problem = std::string(kSignatureField) + " is not {alg: " + std::string(kSignatureAlgorithm) +
                ", mac: hex}";
    return c;
  }
  const std::string want = hmac_sha256_hex(key, signed_part(root));
  c.ok = mac->text == want;
  if (!c.ok)
    c.problem =
        "the signature does not match under the dispatcher's key (written by someone "
        "without the key, or edited)";
  return c;
}

}  // namespace kd::contract
