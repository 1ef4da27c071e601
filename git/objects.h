// Read-only access to a git repository's refs and objects, written for short-lived commands:
// no library-wide initialization, no transports, files opened only when an object lives there.
// Reads the "files" ref backend (loose refs, packed-refs) and SHA-1 object storage (loose
// objects, pack index v2 with offset and ref deltas, alternates). Every object read is checked
// against its id. A repository using a format extension this reader does not know is refused.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kd::git {

enum class ObjectType { commit = 1, tree = 2, blob = 3, tag = 4 };

struct StoredObject {
  ObjectType type;
  std::string data;
};

// One tree entry; `mode` is the file mode as git stores it (040000, 100644, 100755, 120000,
// 160000).
struct TreeEntry {
  unsigned mode = 0;
  std::string name;
  std::string id;  // 40 hex digits
  bool is_tree() const { return (mode & 0170000) == 0040000; }
  bool is_blob() const { return (mode & 0170000) == 0100000 || is_link(); }
  bool is_link() const { return (mode & 0170000) == 0120000; }
};

// Parses a tree object's payload; throws kd::Error naming `what` on malformed bytes. Only git's
// canonical form is accepted (modes without zero padding; names that are one path component, not
// "." or ".."), so tree_bytes(parse_tree(data)) == data.
std::vector<TreeEntry> parse_tree(const std::string& data, const std::string& what);
// A tree object's payload for `entries`, in their order; each id is 40 lower-case hex digits.
std::string tree_bytes(const std::vector<TreeEntry>& entries);
// The entry `name` of a tree object's payload without parsing the rest, or nullopt.
std::optional<TreeEntry> find_tree_entry(const std::string& data, std::string_view name,
                                         const std::string& what);

class ObjectStore {
 public:
  // `repo` is a working tree holding `.git` (a directory, or a file naming one) or a bare
  // repository; it is never searched upwards. Throws kd::Error naming the path.
  explicit ObjectStore(const std::filesystem::path& repo);
  ~ObjectStore();
  ObjectStore(ObjectStore&&) noexcept;
  ObjectStore(const ObjectStore&) = delete;
  ObjectStore& operator=(const ObjectStore&) = delete;

  // "HEAD" or a full ref name ("refs/heads/main"), followed through symbolic refs and peeled
  // through annotated tags to a commit id; throws kd::Error naming the ref.
  std::string resolve_commit(const std::string& ref) const;
  // The object with id `hex`, checked against the id; throws kd::Error when it is missing,
  // malformed or not of type `want` (when given).
  const StoredObject& read(const std::string& hex,
                           std::optional<ObjectType> want = std::nullopt) const;
  // Whether the ref exists (loose or packed); "HEAD" or a full ref name.
  bool has_ref(const std::string& ref) const;
  // The ref's target without following it: an object id, or "ref: <name>" for a symbolic ref.
  std::string ref_target(const std::string& ref) const;
  // The ids of objects (loose and packed) that begin with `prefix` (4 to 40 lower-case hex
  // digits), at most `limit` of them: one means the prefix is unambiguous.
  std::vector<std::string> ids_with_prefix(std::string_view prefix, size_t limit = 2) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kd::git
