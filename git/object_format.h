// Git's object byte formats as pure functions over bytes, with no file or repository behind
// them: the loose object encoding, a pack entry's header, deltas. ObjectStore (git/objects.h)
// reads with these; tests and fuzzers drive them directly. Every function checks the bytes as
// strictly as the store does (git's canonical forms) and throws kd::Error naming `what`.
// Allocation follows the bytes actually decoded, never a size the input merely declares.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "git/objects.h"

namespace kd::git {

const char* type_name(ObjectType t);  // "commit", "tree", "blob", "tag"
std::optional<ObjectType> type_of(std::string_view name);

// A loose object's header: "<type> <size>\0", the size in canonical decimal (no leading zero).
struct LooseHeader {
  ObjectType type;
  std::uint64_t size = 0;
  std::size_t length = 0;  // bytes the header takes, its NUL included
};
// Reads the header at the start of `inflated` (at least its first 32 bytes, when there are).
LooseHeader parse_loose_header(std::string_view inflated, const std::string& what);
// A loose object file's bytes: zlib over header and payload, which must have the declared size.
StoredObject decode_loose_object(std::string_view file, const std::string& what);

// A pack entry's header at `offset` of `pack` (the file without its trailing checksum): type
// (1-4 whole objects, 6 OFS_DELTA, 7 REF_DELTA) and size in a varint, then for OFS_DELTA how far
// back the base starts and for REF_DELTA the base's raw id.
struct PackEntryHeader {
  int type = 0;
  std::uint64_t size = 0;       // of the inflated object, or of the inflated delta
  std::uint64_t base_back = 0;  // OFS_DELTA: the base is at offset - base_back (0 < it <= offset)
  std::size_t data = 0;         // where the zlib stream starts (after a REF_DELTA's base id)
};
PackEntryHeader parse_pack_entry_header(std::string_view pack, std::uint64_t offset,
                                        const std::string& what);

// Exactly `size` bytes inflated from the zlib stream at the start of `in`, which must end there.
std::string inflate_exact(std::string_view in, std::uint64_t size, const std::string& what);

// Applies a git delta to `base`; throws when the delta does not fit it or does not produce the
// size it declares.
std::string apply_delta(std::string_view base, std::string_view delta, const std::string& what);

}  // namespace kd::git
