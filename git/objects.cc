#include "git/objects.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

// The one-shot SHA-1 context needs no provider lookup, which EVP would do at first use.
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>

#include "common/errors.h"
#include "common/files.h"
#include "common/text.h"
#include "git/object_format.h"

namespace fs = std::filesystem;

namespace kd::git {
namespace {

constexpr int kMaxDeltaChain = 10000;  // git itself caps --depth at 4095
constexpr int kMaxSymref = 5;

std::string hex_of(const unsigned char* raw) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(40, '0');
  for (int i = 0; i < 20; ++i) {
    out[2 * i] = kHex[raw[i] >> 4];
    out[2 * i + 1] = kHex[raw[i] & 15];
  }
  return out;
}

bool is_hex_id(std::string_view s) {
  return s.size() == 40 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

std::array<unsigned char, 20> raw_of(const std::string& hex) {
  std::array<unsigned char, 20> raw{};
  auto nibble = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
  for (int i = 0; i < 20; ++i)
    raw[i] = static_cast<unsigned char>(nibble(hex[2 * i]) << 4 | nibble(hex[2 * i + 1]));
  return raw;
}

std::string object_id(ObjectType type, const std::string& data) {
  std::string header = std::string(type_name(type)) + " " + std::to_string(data.size());
  SHA_CTX ctx;
  SHA1_Init(&ctx);
  SHA1_Update(&ctx, header.c_str(), header.size() + 1);  // with the NUL
  SHA1_Update(&ctx, data.data(), data.size());
  unsigned char raw[20];
  SHA1_Final(raw, &ctx);
  return hex_of(raw);
}

// The file's bytes, or nullopt when it does not exist; throws naming the path otherwise.
std::optional<std::string> read_if_exists(const fs::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    if (e == ENOENT || e == ENOTDIR) return std::nullopt;
    throw_sys("open", quote(path.string()), e);
  }
  std::string out;
  char buf[16384];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      ::close(fd);
      throw_sys("read", quote(path.string()), e);
    }
    if (n == 0) break;
    out.append(buf, size_t(n));
  }
  ::close(fd);
  return out;
}

// A read-only mapping of a whole file.
struct Mapping {
  const unsigned char* data = nullptr;
  size_t size = 0;
  Mapping() = default;
  explicit Mapping(const fs::path& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      int e = errno;
      throw_sys("open", quote(path.string()), e);
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
      int e = errno;
      ::close(fd);
      throw_sys("fstat", quote(path.string()), e);
    }
    size = size_t(st.st_size);
    if (size > 0) {
      void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
      int e = errno;
      ::close(fd);
      if (p == MAP_FAILED) throw_sys("mmap", quote(path.string()), e);
      data = static_cast<const unsigned char*>(p);
    } else {
      ::close(fd);
    }
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  ~Mapping() {
    if (data) ::munmap(const_cast<unsigned char*>(data), size);
  }
};

uint32_t be32(const unsigned char* p) {
  return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | uint32_t(p[3]);
}

// One pack and its version-2 index, mapped on first use.
struct Pack {
  fs::path idx_path, pack_path;
  std::unique_ptr<Mapping> idx, pack;
  uint32_t count = 0;

  void open() {
    if (idx) return;
    idx = std::make_unique<Mapping>(idx_path);
    const unsigned char* d = idx->data;
    if (idx->size < 8 + 1024 || std::memcmp(d, "\377tOc", 4) != 0 || be32(d + 4) != 2)
      throw Error(quote(idx_path.string()) + " is not a version 2 pack index");
    count = be32(d + 8 + 255 * 4);
    if (idx->size < 8 + 1024 + size_t(count) * 28 + 40)
      throw Error(quote(idx_path.string()) + " is truncated");
    pack = std::make_unique<Mapping>(pack_path);
    if (pack->size < 32 || std::memcmp(pack->data, "PACK", 4) != 0)
      throw Error(quote(pack_path.string()) + " is not a pack file");
  }

  // The pack offset of `raw`, or nullopt when this pack does not hold it.
  std::optional<uint64_t> find(const std::array<unsigned char, 20>& raw) {
    open();
    const unsigned char* fanout = idx->data + 8;
    uint32_t lo = raw[0] == 0 ? 0 : be32(fanout + (raw[0] - 1) * 4);
    uint32_t hi = be32(fanout + raw[0] * 4);
    if (hi > count || lo > hi) throw Error(quote(idx_path.string()) + " has a corrupt fan-out");
    const unsigned char* ids = fanout + 1024;
    while (lo < hi) {
      uint32_t mid = lo + (hi - lo) / 2;
      int c = std::memcmp(ids + size_t(mid) * 20, raw.data(), 20);
      if (c == 0) return offset_at(mid);
      if (c < 0)
        lo = mid + 1;
      else
        hi = mid;
    }
    return std::nullopt;
  }

  // Appends the ids of this pack that begin with `prefix` (hex) to `out`, up to `limit` in all.
  void ids_with_prefix(std::string_view prefix, std::vector<std::string>& out, size_t limit) {
    open();
    std::string padded(prefix);
    padded.resize(40, '0');
    const auto raw = raw_of(padded);
    const unsigned char* fanout = idx->data + 8;
    uint32_t lo = raw[0] == 0 ? 0 : be32(fanout + (raw[0] - 1) * 4);
    uint32_t hi = be32(fanout + raw[0] * 4);
    if (hi > count || lo > hi) throw Error(quote(idx_path.string()) + " has a corrupt fan-out");
    const unsigned char* ids = fanout + 1024;
    while (lo < hi) {  // the first id not below the padded prefix
      uint32_t mid = lo + (hi - lo) / 2;
      if (std::memcmp(ids + size_t(mid) * 20, raw.data(), 20) < 0)
        lo = mid + 1;
      else
        hi = mid;
    }
    for (uint32_t i = lo; i < count && out.size() < limit; ++i) {
      std::string hex = hex_of(ids + size_t(i) * 20);
      if (hex.compare(0, prefix.size(), prefix) != 0) break;
      if (std::find(out.begin(), out.end(), hex) == out.end()) out.push_back(std::move(hex));
    }
  }

  uint64_t offset_at(uint32_t i) const {
    const unsigned char* offsets = idx->data + 8 + 1024 + size_t(count) * 24;
    uint32_t o = be32(offsets + size_t(i) * 4);
    if (!(o & 0x80000000u)) return o;
    size_t at = size_t(count) * 4 + size_t(o & 0x7fffffffu) * 8;
    if (8 + 1024 + size_t(count) * 28 + at + 8 + 40 > idx->size)
      throw Error(quote(idx_path.string()) + " has a large offset out of range");
    return uint64_t(be32(offsets + at)) << 32 | be32(offsets + at + 4);
  }
};

// The repository layout: where HEAD lives, where shared refs and objects live.
struct Layout {
  fs::path gitdir, commondir;
};

Layout find_layout(const fs::path& repo) {
  Layout l;
  fs::path dotgit = repo / ".git";
  struct stat st {};
  if (::stat(dotgit.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    l.gitdir = dotgit;
  } else if (::stat(dotgit.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
    std::string text = read_file(dotgit);
    if (text.rfind("gitdir: ", 0) != 0)
      throw Error(quote(dotgit.string()) + " is not a gitdir file");
    std::string target = text.substr(8, text.find_first_of("\r\n") - 8);
    l.gitdir = fs::path(target).is_absolute() ? fs::path(target) : repo / target;
  } else if (::stat((repo / "HEAD").c_str(), &st) == 0 &&
             ::stat((repo / "objects").c_str(), &st) == 0) {
    l.gitdir = repo;  // bare
  } else {
    throw Error(quote(repo.string()) + " is not a git repository");
  }
  l.commondir = l.gitdir;
  if (auto text = read_if_exists(l.gitdir / "commondir")) {
    std::string target = text->substr(0, text->find_first_of("\r\n"));
    l.commondir = fs::path(target).is_absolute() ? fs::path(target) : l.gitdir / target;
  }
  return l;
}

// Refuses a repository whose format this reader cannot read faithfully: fail closed.
void check_format(const fs::path& config) {
  std::optional<std::string> text = read_if_exists(config);
  if (!text) return;
  std::string section;
  int version = 0;
  size_t start = 0;
  while (start < text->size()) {
    size_t end = text->find('\n', start);
    std::string line(
        trim(std::string_view(*text).substr(start, end == std::string::npos ? end : end - start)));
    start = end == std::string::npos ? text->size() : end + 1;
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line[0] == '[') {
      section = lower(trim(std::string_view(line).substr(1, line.find(']') - 1)));
      continue;
    }
    size_t eq = line.find('=');
    std::string key = lower(trim(std::string_view(line).substr(0, eq)));
    std::string value =
        eq == std::string::npos ? "true" : lower(trim(std::string_view(line).substr(eq + 1)));
    if (section == "core" && key == "repositoryformatversion") {
      version = std::atoi(value.c_str());
      if (version < 0 || version > 1)
        throw Error(quote(config.string()) + ": repository format version " + value +
                    " is not supported");
    } else if (section == "extensions") {
      bool known = key == "noop" || key == "preciousobjects" || key == "partialclone" ||
                   key == "worktreeconfig" || (key == "objectformat" && value == "sha1") ||
                   (key == "refstorage" && value == "files");
      if (!known)
        throw Error(quote(config.string()) + ": extension " + key + " = " + value +
                    " is not supported");
    }
  }
}

// git check-ref-format's rules, so a ref name never reaches outside the refs directory.
bool valid_ref_name(const std::string& name) {
  if (name == "HEAD") return true;
  if (name.rfind("refs/", 0) != 0 || name.back() == '/' || name.back() == '.' ||
      name.find("..") != std::string::npos || name.find("//") != std::string::npos ||
      name.find("@{") != std::string::npos)
    return false;
  for (char c : name)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f || std::strchr(" ~^:?*[\\", c))
      return false;
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = name.find('/', start);
    std::string part = name.substr(start, end == std::string::npos ? end : end - start);
    if (part.empty() || part[0] == '.' ||
        (part.size() >= 5 && part.compare(part.size() - 5, 5, ".lock") == 0))
      return false;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return true;
}

}  // namespace

namespace {

// Reads the tree entry starting at `pos` into `mode` and `name` and returns the position of its
// 20-byte raw id; throws naming `what` on malformed bytes. Only git's canonical form is read:
// octal modes without zero padding, names that are one path component.
size_t tree_entry_at(const std::string& data, size_t pos, const std::string& what, unsigned& mode,
                     std::string_view& name) {
  size_t space = data.find(' ', pos);
  size_t nul = space == std::string::npos ? space : data.find('\0', space);
  if (nul == std::string::npos || nul + 21 > data.size() || space == pos || nul == space + 1)
    throw Error(what + ": malformed tree entry at byte " + std::to_string(pos));
  if (space - pos > 6 || data[pos] == '0')
    throw Error(what + ": malformed mode at byte " + std::to_string(pos));
  mode = 0;
  for (size_t i = pos; i < space; ++i) {
    if (data[i] < '0' || data[i] > '7')
      throw Error(what + ": malformed mode at byte " + std::to_string(pos));
    mode = mode * 8 + unsigned(data[i] - '0');
  }
  name = std::string_view(data).substr(space + 1, nul - space - 1);
  unsigned kind = mode & 0170000;
  if (kind != 0040000 && kind != 0100000 && kind != 0120000 && kind != 0160000)
    throw Error(what + ": entry " + quote(name) + " has an unknown mode");
  // A name that is not one component would let a path lookup or a listing step out of the tree.
  if (name == "." || name == ".." || name.find('/') != std::string_view::npos)
    throw Error(what + ": entry name " + quote(name) + " is not a single path component");
  return nul + 1;
}

}  // namespace

std::vector<TreeEntry> parse_tree(const std::string& data, const std::string& what) {
  std::vector<TreeEntry> out;
  for (size_t pos = 0; pos < data.size(); pos += 20) {
    TreeEntry e;
    std::string_view name;
    pos = tree_entry_at(data, pos, what, e.mode, name);
    e.name = name;
    e.id = hex_of(reinterpret_cast<const unsigned char*>(data.data() + pos));
    out.push_back(std::move(e));
  }
  return out;
}

std::optional<TreeEntry> find_tree_entry(const std::string& data, std::string_view name,
                                         const std::string& what) {
  for (size_t pos = 0; pos < data.size(); pos += 20) {
    unsigned mode;
    std::string_view n;
    pos = tree_entry_at(data, pos, what, mode, n);
    if (n == name)
      return TreeEntry{mode, std::string(n),
                       hex_of(reinterpret_cast<const unsigned char*>(data.data() + pos))};
  }
  return std::nullopt;
}

std::string tree_bytes(const std::vector<TreeEntry>& entries) {
  std::string out;
  for (const auto& e : entries) {
    char mode[16];
    std::snprintf(mode, sizeof mode, "%o", e.mode);
    out += mode;
    out += ' ';
    out += e.name;
    out += '\0';
    const auto raw = raw_of(e.id);
    out.append(reinterpret_cast<const char*>(raw.data()), raw.size());
  }
  return out;
}

struct ObjectStore::Impl {
  fs::path repo;
  Layout layout;
  std::vector<fs::path> object_dirs;  // the repository's, then its alternates
  std::vector<Pack> packs;
  bool packs_listed = false;
  std::map<std::string, StoredObject> cache;  // checked objects by id; trees are read many times
  std::map<std::pair<size_t, uint64_t>, StoredObject> bases;  // delta bases by pack and offset

  void add_object_dir(const fs::path& dir, int depth) {
    object_dirs.push_back(dir);
    std::optional<std::string> text;
    if (depth >= 5 || !(text = read_if_exists(dir / "info" / "alternates"))) return;
    size_t start = 0;
    while (start < text->size()) {
      size_t end = text->find('\n', start);
      std::string line(trim(
          std::string_view(*text).substr(start, end == std::string::npos ? end : end - start)));
      start = end == std::string::npos ? text->size() : end + 1;
      if (line.empty() || line[0] == '#') continue;
      add_object_dir(fs::path(line).is_absolute() ? fs::path(line) : dir / line, depth + 1);
    }
  }

  void list_packs() {
    if (packs_listed) return;
    packs_listed = true;
    for (const auto& dir : object_dirs) {
      fs::path pack_dir = dir / "pack";
      DIR* d = ::opendir(pack_dir.c_str());
      if (!d) {
        int e = errno;
        if (e == ENOENT) continue;
        throw_sys("opendir", quote(pack_dir.string()), e);
      }
      std::vector<std::string> names;
      while (dirent* e = ::readdir(d)) {
        std::string n = e->d_name;
        if (n.size() > 4 && n.compare(n.size() - 4, 4, ".idx") == 0) names.push_back(n);
      }
      ::closedir(d);
      std::sort(names.begin(), names.end());
      for (const auto& n : names) {
        Pack p;
        p.idx_path = pack_dir / n;
        p.pack_path = pack_dir / (n.substr(0, n.size() - 4) + ".pack");
        packs.push_back(std::move(p));
      }
    }
  }

  std::optional<StoredObject> read_loose(const std::string& hex) {
    for (const auto& dir : object_dirs) {
      fs::path path = dir / hex.substr(0, 2) / hex.substr(2);
      if (std::optional<std::string> raw = read_if_exists(path))
        return decode_loose_object(*raw, quote(path.string()));
    }
    return std::nullopt;
  }

  // The object at `offset` in pack `pi`, with its delta chain applied.
  StoredObject read_packed(size_t pi, uint64_t offset, int depth) {
    if (depth > kMaxDeltaChain)
      throw Error(quote(packs[pi].pack_path.string()) + ": delta chain longer than " +
                  std::to_string(kMaxDeltaChain));
    Pack& p = packs[pi];
    std::string what = quote(p.pack_path.string()) + " at offset " + std::to_string(offset);
    // The entries end where the trailing checksum starts.
    std::string_view body(reinterpret_cast<const char*>(p.pack->data), p.pack->size - 20);
    const PackEntryHeader h = parse_pack_entry_header(body, offset, what);
    const std::string_view stream = body.substr(h.data);
    if (h.type >= 1 && h.type <= 4)
      return StoredObject{ObjectType(h.type), inflate_exact(stream, h.size, what)};
    const StoredObject* base = nullptr;
    if (h.type == 6) {
      auto key = std::make_pair(pi, offset - h.base_back);
      auto it = bases.find(key);
      if (it == bases.end())
        it = bases.emplace(key, read_packed(pi, offset - h.base_back, depth + 1)).first;
      base = &it->second;
    } else {  // REF_DELTA: the base is named by id, anywhere in the repository
      base = &object(hex_of(p.pack->data + h.data - 20), depth + 1);
    }
    std::string delta = inflate_exact(stream, h.size, what);
    return StoredObject{base->type, apply_delta(base->data, delta, what)};
  }

  // The object `hex`, checked against its id and kept.
  const StoredObject& object(const std::string& hex, int depth) {
    if (auto it = cache.find(hex); it != cache.end()) return it->second;
    std::optional<StoredObject> o = read_loose(hex);
    if (!o) {
      list_packs();
      auto raw = raw_of(hex);
      for (size_t i = 0; i < packs.size() && !o; ++i)
        if (auto off = packs[i].find(raw)) o = read_packed(i, *off, depth);
    }
    if (!o) throw Error("object " + hex + " not found in " + quote(repo.string()));
    if (object_id(o->type, o->data) != hex)
      throw Error("object " + hex + " in " + quote(repo.string()) +
                  " does not match its id (corrupt repository)");
    return cache.emplace(hex, std::move(*o)).first->second;
  }

  // The target of ref `name`: an object id, or "ref: <other>" for a symbolic ref; nullopt when
  // there is no such ref.
  std::optional<std::string> find_ref(const std::string& name) {
    fs::path loose = (name == "HEAD" ? layout.gitdir : layout.commondir) / name;
    if (auto text = read_if_exists(loose))
      return std::string(trim(std::string_view(*text).substr(0, text->find('\n'))));
    if (auto text = read_if_exists(layout.commondir / "packed-refs")) {
      size_t start = 0;
      while (start < text->size()) {
        size_t end = text->find('\n', start);
        std::string_view line(text->data() + start,
                              (end == std::string::npos ? text->size() : end) - start);
        start = end == std::string::npos ? text->size() : end + 1;
        if (line.size() > 41 && line[40] == ' ' && line.substr(41) == name)
          return std::string(line.substr(0, 40));
      }
    }
    return std::nullopt;
  }

  std::string read_ref(const std::string& name) {
    if (!valid_ref_name(name)) throw Error(quote(name) + " is not a valid reference name");
    if (auto target = find_ref(name)) return *target;
    throw Error("reference " + quote(name) + " not found in " + quote(repo.string()));
  }
};

ObjectStore::ObjectStore(const fs::path& repo) : impl_(new Impl) {
  impl_->repo = repo;
  impl_->layout = find_layout(repo);
  check_format(impl_->layout.commondir / "config");
  impl_->add_object_dir(impl_->layout.commondir / "objects", 0);
}

ObjectStore::~ObjectStore() = default;
ObjectStore::ObjectStore(ObjectStore&&) noexcept = default;

std::string ObjectStore::resolve_commit(const std::string& ref) const {
  std::string name = ref, target;
  for (int hops = 0;; ++hops) {
    target = impl_->read_ref(name);
    if (target.rfind("ref:", 0) != 0) break;
    if (hops == kMaxSymref)
      throw Error("reference " + quote(ref) + " nests symbolic refs too deep");
    name = std::string(trim(std::string_view(target).substr(4)));
  }
  if (!is_hex_id(target))
    throw Error("reference " + quote(name) + " in " + quote(impl_->repo.string()) + " holds " +
                quote(target) + ", not an object id");
  for (int hops = 0;; ++hops) {
    const StoredObject& o = read(target);
    if (o.type == ObjectType::commit) return target;
    if (o.type != ObjectType::tag || hops == kMaxSymref)
      throw Error("reference " + quote(ref) + " names a " + type_name(o.type) + ", not a commit");
    if (o.data.rfind("object ", 0) != 0 || !is_hex_id(o.data.substr(7, 40)))
      throw Error("tag " + target + " is malformed");
    target = o.data.substr(7, 40);
  }
}

const StoredObject& ObjectStore::read(const std::string& hex,
                                      std::optional<ObjectType> want) const {
  if (!is_hex_id(hex)) throw Error(quote(hex) + " is not an object id");
  const StoredObject& o = impl_->object(hex, 0);
  if (want && o.type != *want)
    throw Error("object " + hex + " is a " + type_name(o.type) + ", expected a " +
                type_name(*want));
  return o;
}

bool ObjectStore::has_ref(const std::string& ref) const {
  return valid_ref_name(ref) && impl_->find_ref(ref).has_value();
}

std::string ObjectStore::ref_target(const std::string& ref) const {
  return impl_->read_ref(ref);
}

std::vector<std::string> ObjectStore::ids_with_prefix(std::string_view prefix, size_t limit) const {
  std::vector<std::string> out;
  if (prefix.size() < 4 || prefix.size() > 40 ||
      prefix.find_first_not_of("0123456789abcdef") != std::string_view::npos)
    return out;
  for (const auto& dir : impl_->object_dirs) {
    fs::path sub = dir / std::string(prefix.substr(0, 2));
    DIR* d = ::opendir(sub.c_str());
    if (!d) continue;
    while (dirent* e = ::readdir(d)) {
      std::string hex = std::string(prefix.substr(0, 2)) + e->d_name;
      if (out.size() < limit && is_hex_id(hex) && hex.compare(0, prefix.size(), prefix) == 0 &&
          std::find(out.begin(), out.end(), hex) == out.end())
        out.push_back(hex);
    }
    ::closedir(d);
  }
  impl_->list_packs();
  for (auto& p : impl_->packs)
    if (out.size() < limit) p.ids_with_prefix(prefix, out, limit);
  return out;
}

}  // namespace kd::git
