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

namespace kd::briefs {

enum class GitType { commit = 1, tree = 2, blob = 3, tag = 4 };

struct GitObject {
  GitType type;
  std::string data;
};

// One tree entry; `mode` is the file mode as git stores it (040000, 100644, 100755, 120000,
// 160000).
struct GitTreeEntry {
  unsigned mode = 0;
  std::string name;
  std::string id;  // 40 hex digits
  bool is_tree() const { return (mode & 0170000) == 0040000; }
  bool is_blob() const { return (mode & 0170000) == 0100000 || is_link(); }
  bool is_link() const { return (mode & 0170000) == 0120000; }
};

// Parses a tree object's payload; throws kd::Error naming `what` on malformed bytes.
std::vector<GitTreeEntry> parse_git_tree(const std::string& data, const std::string& what);
// The entry `name` of a tree object's payload without parsing the rest, or nullopt.
std::optional<GitTreeEntry> find_git_tree_entry(const std::string& data, std::string_view name,
                                                const std::string& what);

class GitObjects {
 public:
  // `repo` is a working tree holding `.git` (a directory, or a file naming one) or a bare
  // repository; it is never searched upwards. Throws kd::Error naming the path.
  explicit GitObjects(const std::filesystem::path& repo);
  ~GitObjects();
  GitObjects(GitObjects&&) noexcept;
  GitObjects(const GitObjects&) = delete;
  GitObjects& operator=(const GitObjects&) = delete;

  // "HEAD" or a full ref name ("refs/heads/main"), followed through symbolic refs and peeled
  // through annotated tags to a commit id; throws kd::Error naming the ref.
  std::string resolve_commit(const std::string& ref) const;
  // The object with id `hex`, checked against the id; throws kd::Error when it is missing,
  // malformed or not of type `want` (when given).
  const GitObject& read(const std::string& hex, std::optional<GitType> want = std::nullopt) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kd::briefs
