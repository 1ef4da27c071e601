// Feeds arbitrary bytes to git's object formats as the reader parses them (git/object_format.h,
// parse_tree): none may crash, hang or allocate what the bytes only declare, and each has a
// property. The first byte picks the format:
//   0 tree: a payload that parses re-serializes to the same bytes, and find_tree_entry finds what
//     parse_tree lists;
//   1 delta: an arbitrary delta applies to a base or throws; what applies has the declared size;
//   2 delta round trip: a delta encoded from (base, target) applies to base and gives target;
//   3 loose header: a header that parses is the canonical "<type> <size>\0";
//   4 loose object file: what decodes re-encodes and decodes to the same object;
//   5 loose object round trip: (type, payload) deflated at any level decodes to itself;
//   6 pack entry: a header that parses lies inside the pack, and its stream inflates or throws.
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/errors.h"
#include "git/object_format.h"
#include "git/objects.h"

namespace {

using namespace kd::git;

void check(bool ok) {
  if (!ok) std::abort();
}

std::string deflated(std::string_view bytes, int level) {
  uLongf size = compressBound(bytes.size());
  std::string out(size, '\0');
  check(compress2(reinterpret_cast<Bytef*>(out.data()), &size,
                  reinterpret_cast<const Bytef*>(bytes.data()), bytes.size(), level) == Z_OK);
  out.resize(size);
  return out;
}

std::string loose_file(const StoredObject& o, int level) {
  std::string raw = std::string(type_name(o.type)) + " " + std::to_string(o.data.size());
  raw += '\0';
  return deflated(raw + o.data, level);
}

void tree(const std::string& data) {
  std::vector<TreeEntry> entries;
  try {
    entries = parse_tree(data, "fuzz");
  } catch (const kd::Error&) {
    return;
  }
  check(tree_bytes(entries) == data);
  for (const auto& e : entries) {
    std::optional<TreeEntry> found = find_tree_entry(data, e.name, "fuzz");
    check(found.has_value());
    for (const auto& first : entries)
      if (first.name == e.name) {
        check(found->mode == first.mode && found->id == first.id);
        break;
      }
  }
}

std::string varint(std::uint64_t v) {
  std::string out;
  do {
    unsigned char c = v & 0x7f;
    v >>= 7;
    out += char(v ? c | 0x80 : c);
  } while (v);
  return out;
}

// A delta turning `base` into `target`: copies of runs found in the base, inserts elsewhere.
std::string encode_delta(std::string_view base, std::string_view target) {
  std::string out = varint(base.size()) + varint(target.size());
  std::string pending;
  auto flush = [&] {
    for (size_t at = 0; at < pending.size(); at += 127) {
      std::string_view piece = std::string_view(pending).substr(at, 127);
      out += char(piece.size());
      out += piece;
    }
    pending.clear();
  };
  for (size_t i = 0; i < target.size();) {
    size_t best = 0, best_off = 0;
    for (size_t off = 0; off < base.size(); ++off) {
      size_t n = 0;
      while (off + n < base.size() && i + n < target.size() && base[off + n] == target[i + n] &&
             n < 0x10000)
        ++n;
      if (n > best) best = n, best_off = off;
    }
    if (best < 4) {
      pending += target[i++];
      continue;
    }
    flush();
    unsigned char op = 0x80;
    std::string args;
    for (int b = 0; b < 4; ++b)
      if ((best_off >> (8 * b)) & 0xff) op |= 1 << b, args += char((best_off >> (8 * b)) & 0xff);
    size_t len = best == 0x10000 ? 0 : best;  // a zero size means 0x10000
    for (int b = 0; b < 3; ++b)
      if ((len >> (8 * b)) & 0xff) op |= 0x10 << b, args += char((len >> (8 * b)) & 0xff);
    out += char(op);
    out += args;
    i += best;
  }
  flush();
  return out;
}

void delta(std::string_view in, bool round_trip) {
  if (in.size() < 2) return;
  const size_t split = std::min<size_t>(in.size() - 2, uint8_t(in[0]) | uint8_t(in[1]) << 8);
  const std::string_view base = in.substr(2, split), rest = in.substr(2 + split);
  if (round_trip) {
    if (base.size() > 512 || rest.size() > 512) return;  // the encoder above is quadratic
    check(apply_delta(base, encode_delta(base, rest), "fuzz") == rest);
    return;
  }
  try {
    std::string out = apply_delta(base, rest, "fuzz");
    size_t pos = 0;
    auto read_varint = [&] {
      std::uint64_t v = 0;
      for (int shift = 0;; shift += 7) {
        auto c = static_cast<unsigned char>(rest[pos++]);
        v |= std::uint64_t(c & 0x7f) << shift;
        if (!(c & 0x80)) return v;
      }
    };
    read_varint();
    check(out.size() == read_varint());
  } catch (const kd::Error&) {
  }
}

void loose_header(std::string_view in) {
  try {
    LooseHeader h = parse_loose_header(in, "fuzz");
    std::string canonical = std::string(type_name(h.type)) + " " + std::to_string(h.size);
    canonical += '\0';
    check(in.substr(0, h.length) == canonical);
  } catch (const kd::Error&) {
  }
}

void loose_object(std::string_view in) {
  StoredObject o;
  try {
    o = decode_loose_object(in, "fuzz");
  } catch (const kd::Error&) {
    return;
  }
  StoredObject again = decode_loose_object(loose_file(o, Z_DEFAULT_COMPRESSION), "fuzz");
  check(again.type == o.type && again.data == o.data);
}

void loose_round_trip(std::string_view in) {
  if (in.empty()) return;
  const StoredObject o{ObjectType(1 + uint8_t(in[0]) % 4), std::string(in.substr(1))};
  const int level = uint8_t(in[0]) / 4 % 10;  // 0 (stored) to 9
  StoredObject back = decode_loose_object(loose_file(o, level), "fuzz");
  check(back.type == o.type && back.data == o.data);
}

void pack_entry(std::string_view in) {
  if (in.size() < 2) return;
  const std::uint64_t offset = uint8_t(in[0]) % (in.size() - 1);
  const std::string_view pack = in.substr(1);
  try {
    PackEntryHeader h = parse_pack_entry_header(pack, offset, "fuzz");
    check(h.data > offset && h.data <= pack.size());
    check((h.type >= 1 && h.type <= 4) || h.type == 6 || h.type == 7);
    check(h.type == 6 ? h.base_back > 0 && h.base_back <= offset : h.base_back == 0);
    check(h.type != 7 || h.data - offset >= 21);
    std::string data = inflate_exact(pack.substr(h.data), h.size, "fuzz");
    check(data.size() == h.size);
  } catch (const kd::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 7) {
    case 0:
      tree(std::string(in));
      break;
    case 1:
      delta(in, false);
      break;
    case 2:
      delta(in, true);
      break;
    case 3:
      loose_header(in);
      break;
    case 4:
      loose_object(in);
      break;
    case 5:
      loose_round_trip(in);
      break;
    case 6:
      pack_entry(in);
      break;
  }
  return 0;
}
