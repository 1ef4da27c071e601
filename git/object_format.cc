#include "git/object_format.h"

#include <zlib.h>

#include <algorithm>
#include <climits>

#include "common/errors.h"

namespace kd::git {
namespace {

// The first piece of an output buffer; it doubles from there as inflated bytes arrive.
constexpr std::size_t kFirstPiece = 64 * 1024;

// A zlib stream over the bytes of `in`, inflated piece by piece; errors name `what`.
class Inflater {
 public:
  Inflater(std::string_view in, std::string what) : what_(std::move(what)) {
    if (inflateInit(&z_) != Z_OK) throw Error("inflateInit(" + what_ + "): out of memory");
    z_.next_in = reinterpret_cast<unsigned char*>(const_cast<char*>(in.data()));
    z_.avail_in = static_cast<uInt>(std::min<std::size_t>(in.size(), UINT_MAX));
  }
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;
  ~Inflater() { inflateEnd(&z_); }

  // Fills up to `n` bytes at `out`; returns how many, fewer only where the stream ends.
  std::size_t read(char* out, std::size_t n) {
    z_.next_out = reinterpret_cast<unsigned char*>(out);
    z_.avail_out = static_cast<uInt>(n);
    while (z_.avail_out > 0 && !ended_) {
      int rc = inflate(&z_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        ended_ = true;
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        throw Error("inflate(" + what_ + "): " + (z_.msg ? z_.msg : "corrupt data"));
      } else if (z_.avail_out > 0 && (z_.avail_in == 0 || rc == Z_BUF_ERROR)) {
        // Room for output and no input left (or no progress possible): the stream is cut short.
        // With the output full, zlib may hold the rest of the input inside; the next read has it.
        throw Error("inflate(" + what_ + "): truncated data");
      }
    }
    return n - z_.avail_out;
  }

  // Appends to `out` until it holds `size` bytes, after which the stream must end. The buffer
  // grows with what is inflated, so a size the input only declares allocates nothing.
  void read_rest(std::string& out, std::uint64_t size) {
    while (out.size() < size && !ended_) {
      const std::size_t at = out.size();
      const std::size_t piece =
          static_cast<std::size_t>(std::min<std::uint64_t>(size - at, std::max(at, kFirstPiece)));
      out.resize(at + piece);
      out.resize(at + read(out.data() + at, piece));
    }
    char probe;
    if (out.size() != size || read(&probe, 1) != 0 || !ended_)
      throw Error("inflate(" + what_ + "): the data does not have the declared " +
                  std::to_string(size) + " bytes");
  }

 private:
  z_stream z_{};
  std::string what_;
  bool ended_ = false;
};

}  // namespace

const char* type_name(ObjectType t) {
  switch (t) {
    case ObjectType::commit:
      return "commit";
    case ObjectType::tree:
      return "tree";
    case ObjectType::blob:
      return "blob";
    case ObjectType::tag:
      return "tag";
  }
  return "?";
}

std::optional<ObjectType> type_of(std::string_view name) {
  for (ObjectType t : {ObjectType::commit, ObjectType::tree, ObjectType::blob, ObjectType::tag})
    if (name == type_name(t)) return t;
  return std::nullopt;
}

LooseHeader parse_loose_header(std::string_view inflated, const std::string& what) {
  const std::string_view h = inflated.substr(0, 32);
  const std::size_t space = h.find(' '), nul = h.find('\0');
  const std::optional<ObjectType> type =
      space < nul && nul != std::string_view::npos ? type_of(h.substr(0, space)) : std::nullopt;
  const std::string_view digits = type ? h.substr(space + 1, nul - space - 1) : std::string_view();
  // Canonical decimal as git writes it and reads it: no sign, no leading zero.
  if (!type || digits.empty() || digits.size() > 15 ||
      digits.find_first_not_of("0123456789") != std::string_view::npos ||
      (digits.size() > 1 && digits[0] == '0'))
    throw Error(what + ": malformed loose object header");
  LooseHeader out{*type, 0, nul + 1};
  for (char c : digits)
    out.size = out.size * 10 + std::uint64_t(c - '0');
  return out;
}

StoredObject decode_loose_object(std::string_view file, const std::string& what) {
  Inflater z(file, what);
  // The header first, so the payload is read straight into its own buffer.
  char head[32];
  const std::size_t got = z.read(head, sizeof head);
  const LooseHeader h = parse_loose_header(std::string_view(head, got), what);
  if (got - h.length > h.size)
    throw Error(what + ": more data than the header's " + std::to_string(h.size) + " bytes");
  StoredObject o{h.type, std::string(head + h.length, got - h.length)};
  z.read_rest(o.data, h.size);
  return o;
}

PackEntryHeader parse_pack_entry_header(std::string_view pack, std::uint64_t offset,
                                        const std::string& what) {
  const auto* d = reinterpret_cast<const unsigned char*>(pack.data());
  const std::size_t end = pack.size();
  if (offset >= end) throw Error(what + ": offset past the end of the pack");
  PackEntryHeader h;
  std::size_t pos = static_cast<std::size_t>(offset);
  unsigned char c = d[pos++];
  h.type = (c >> 4) & 7;
  h.size = c & 15;
  for (int shift = 4; c & 0x80; shift += 7) {
    if (pos >= end || shift > 57) throw Error(what + ": malformed entry header");
    c = d[pos++];
    h.size |= std::uint64_t(c & 0x7f) << shift;
  }
  if (h.type == 6) {  // OFS_DELTA: the base is earlier in this pack
    if (pos >= end) throw Error(what + ": truncated delta offset");
    c = d[pos++];
    std::uint64_t back = c & 0x7f;
    while (c & 0x80) {
      if (pos >= end || back > (UINT64_MAX >> 8)) throw Error(what + ": malformed delta offset");
      c = d[pos++];
      back = ((back + 1) << 7) | (c & 0x7f);
    }
    if (back == 0 || back > offset) throw Error(what + ": delta base offset out of range");
    h.base_back = back;
  } else if (h.type == 7) {  // REF_DELTA: the base's raw id follows
    if (end - pos < 20) throw Error(what + ": truncated delta base id");
    pos += 20;
  } else if (h.type < 1 || h.type > 4) {
    throw Error(what + ": unknown object type " + std::to_string(h.type));
  }
  h.data = pos;
  return h;
}

std::string inflate_exact(std::string_view in, std::uint64_t size, const std::string& what) {
  std::string out;
  Inflater(in, what).read_rest(out, size);
  return out;
}

std::string apply_delta(std::string_view base, std::string_view delta, const std::string& what) {
  std::size_t pos = 0;
  auto varint = [&]() {
    std::uint64_t v = 0;
    for (int shift = 0; pos < delta.size() && shift < 64; shift += 7) {
      auto c = static_cast<unsigned char>(delta[pos++]);
      v |= std::uint64_t(c & 0x7f) << shift;
      if (!(c & 0x80)) return v;
    }
    throw Error(what + ": truncated delta header");
  };
  const std::uint64_t base_size = varint(), result_size = varint();
  if (base_size != base.size())
    throw Error(what + ": delta expects a " + std::to_string(base_size) + "-byte base, got " +
                std::to_string(base.size()));
  std::string out;
  // The declared size is a claim: reserve no more than the base and the delta make plausible,
  // and refuse any piece that would go past it.
  out.reserve(
      static_cast<std::size_t>(std::min<std::uint64_t>(result_size, base.size() + delta.size())));
  auto fits = [&](std::uint64_t len) {
    if (len > result_size - out.size())
      throw Error(what + ": delta produces more than its declared " + std::to_string(result_size) +
                  " bytes");
  };
  while (pos < delta.size()) {
    auto op = static_cast<unsigned char>(delta[pos++]);
    if (op & 0x80) {
      std::uint64_t off = 0, len = 0;
      for (int i = 0; i < 4; ++i)
        if (op & (1 << i)) {
          if (pos >= delta.size()) throw Error(what + ": truncated delta copy");
          off |= std::uint64_t(static_cast<unsigned char>(delta[pos++])) << (8 * i);
        }
      for (int i = 0; i < 3; ++i)
        if (op & (0x10 << i)) {
          if (pos >= delta.size()) throw Error(what + ": truncated delta copy");
          len |= std::uint64_t(static_cast<unsigned char>(delta[pos++])) << (8 * i);
        }
      if (len == 0) len = 0x10000;
      if (off + len > base.size()) throw Error(what + ": delta copies past its base");
      fits(len);
      out.append(base.substr(static_cast<std::size_t>(off), static_cast<std::size_t>(len)));
    } else if (op != 0) {
      if (op > delta.size() - pos) throw Error(what + ": truncated delta insert");
      fits(op);
      out.append(delta.substr(pos, op));
      pos += op;
    } else {
      throw Error(what + ": delta opcode 0");
    }
  }
  if (out.size() != result_size)
    throw Error(what + ": delta produced " + std::to_string(out.size()) + " bytes, expected " +
                std::to_string(result_size));
  return out;
}

}  // namespace kd::git
