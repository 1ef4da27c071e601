#include "git/reader.h"

#include <algorithm>
#include <deque>
#include <set>

#include "common/errors.h"
#include "common/text.h"

namespace fs = std::filesystem;

namespace kd::git {
namespace {

bool is_full_id(const std::string& s) {
  return s.size() == 40 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

// The integer after the last '>' of an author/committer line: "<name> <email> <time> <tz>".
std::int64_t signature_time(std::string_view line) {
  size_t gt = line.rfind('>');
  if (gt == std::string_view::npos) return 0;
  std::string_view rest = trim(line.substr(gt + 1));
  std::int64_t t = 0;
  for (char c : rest.substr(0, rest.find(' '))) {
    if (c < '0' || c > '9') return 0;
    t = t * 10 + (c - '0');
  }
  return t;
}

}  // namespace

ParsedCommit parse_commit(const std::string& data, const std::string& what) {
  ParsedCommit c;
  size_t pos = 0;
  while (pos < data.size()) {
    size_t end = data.find('\n', pos);
    if (end == std::string::npos) throw Error(what + ": commit headers do not end");
    std::string_view line(data.data() + pos, end - pos);
    pos = end + 1;
    if (line.empty()) {
      c.message = data.substr(pos);
      break;
    }
    if (line[0] == ' ') continue;  // a continuation (gpgsig, mergetag)
    if (starts_with(line, "tree ")) {
      c.tree = std::string(line.substr(5));
    } else if (starts_with(line, "parent ")) {
      c.parents.emplace_back(line.substr(7));
    } else if (starts_with(line, "committer ")) {
      c.committer_time = signature_time(line);
    }
  }
  if (!is_full_id(c.tree)) throw Error(what + ": commit has no tree line");
  for (const auto& p : c.parents)
    if (!is_full_id(p)) throw Error(what + ": malformed parent " + quote(p));
  return c;
}

Reader::Reader(const fs::path& repo) : objects_(repo) {}

std::string Reader::resolve(const std::string& rev) const {
  if (is_full_id(rev)) {
    const StoredObject& o = objects_.read(rev);
    if (o.type == ObjectType::commit) return rev;
  }
  if (rev == "HEAD" || starts_with(rev, "refs/")) return objects_.resolve_commit(rev);
  for (const char* prefix : {"refs/heads/", "refs/tags/"})
    if (objects_.has_ref(prefix + rev)) return objects_.resolve_commit(prefix + rev);
  throw Error("revision " + quote(rev) + " not found");
}

ParsedCommit Reader::commit(const std::string& sha) const {
  return parse_commit(objects_.read(sha, ObjectType::commit).data, "commit " + sha);
}

bool Reader::branch_exists(const std::string& branch) const {
  return objects_.has_ref("refs/heads/" + branch);
}

std::pair<std::string, std::string> Reader::head() const {
  std::string target = objects_.ref_target("HEAD");
  std::string branch;
  if (starts_with(target, "ref:")) {
    std::string name(trim(std::string_view(target).substr(4)));
    if (starts_with(name, "refs/heads/")) branch = name.substr(11);
  }
  return {objects_.resolve_commit("HEAD"), branch};
}

std::optional<std::string> Reader::file_at(const std::string& rev, const std::string& path) const {
  std::optional<CommitTree::Entry> e = CommitTree(*this, rev).lookup(path);
  if (!e || !e->is_file) return std::nullopt;
  return std::move(e->content);
}

std::vector<CommitInfo> Reader::branch_commits(const std::string& branch,
                                               const std::string& base) const {
  const std::string tip = objects_.resolve_commit("refs/heads/" + branch);
  // Everything reachable from the base is hidden.
  std::set<std::string> hidden;
  std::deque<std::string> todo{resolve(base)};
  while (!todo.empty()) {
    std::string sha = std::move(todo.front());
    todo.pop_front();
    if (!hidden.insert(sha).second) continue;
    for (auto& p : commit(sha).parents)
      todo.push_back(std::move(p));
  }
  // Post-order from the tip over what is not hidden: parents before children.
  std::vector<CommitInfo> out;
  std::set<std::string> seen;
  struct Frame {
    std::string sha;
    ParsedCommit c;
    size_t next = 0;
  };
  std::vector<Frame> stack;
  auto push = [&](const std::string& sha) {
    if (hidden.count(sha) || !seen.insert(sha).second) return;
    stack.push_back({sha, commit(sha), 0});
  };
  push(tip);
  while (!stack.empty()) {
    Frame& f = stack.back();
    if (f.next < f.c.parents.size()) {
      std::string parent = f.c.parents[f.next++];
      push(parent);
      continue;
    }
    out.push_back({f.sha, f.c.message, f.c.committer_time});
    stack.pop_back();
  }
  return out;
}

bool Reader::is_ancestor(const std::string& ancestor, const std::string& descendant) const {
  std::set<std::string> seen;
  std::deque<std::string> todo{descendant};
  while (!todo.empty()) {
    std::string sha = std::move(todo.front());
    todo.pop_front();
    if (sha == ancestor) return true;
    if (!seen.insert(sha).second) continue;
    for (auto& p : commit(sha).parents)
      todo.push_back(std::move(p));
  }
  return false;
}

std::optional<std::string> Reader::commit_by_prefix(const std::string& prefix) const {
  std::vector<std::string> ids = objects_.ids_with_prefix(lower(prefix), 2);
  if (ids.size() != 1) return std::nullopt;
  try {
    objects_.read(ids[0], ObjectType::commit);
  } catch (const Error&) {
    return std::nullopt;
  }
  return ids[0];
}

std::optional<std::int64_t> Reader::introduced_at(const std::string& path) const {
  std::optional<std::int64_t> when;
  std::string sha = objects_.resolve_commit("HEAD");
  for (;;) {
    ParsedCommit c = commit(sha);
    if (!CommitTree(*this, sha).entry(path)) break;
    when = c.committer_time;
    if (c.parents.empty()) break;
    sha = c.parents.front();
  }
  return when;
}

CommitTree::CommitTree(const fs::path& repo, const std::string& revision) {
  try {
    owned_ = std::make_unique<const Reader>(repo);
    reader_ = owned_.get();
    commit_ = reader_->resolve(revision);
    root_ = reader_->commit(commit_).tree;
  } catch (const Error& e) {
    throw Error("git(" + quote(repo.string()) + " at " + revision + "): " + e.what());
  }
}

CommitTree::CommitTree(const Reader& reader, const std::string& revision) : reader_(&reader) {
  commit_ = reader_->resolve(revision);
  root_ = reader_->commit(commit_).tree;
}

std::optional<TreeEntry> CommitTree::entry(const std::string& path) const {
  if (path.empty()) return std::nullopt;
  std::string tree = root_;
  size_t start = 0;
  while (true) {
    size_t slash = path.find('/', start);
    std::string name = path.substr(start, slash == std::string::npos ? slash : slash - start);
    std::optional<TreeEntry> e =
        find_tree_entry(reader_->objects().read(tree, ObjectType::tree).data, name, "tree " + tree);
    if (!e) return std::nullopt;
    if (slash == std::string::npos) return e;
    if (!e->is_tree()) return std::nullopt;
    tree = e->id;
    start = slash + 1;
  }
}

std::optional<CommitTree::Entry> CommitTree::lookup(const std::string& path) const {
  std::optional<TreeEntry> e = entry(path);
  if (!e) return std::nullopt;
  Entry out;
  if (!e->is_blob()) return out;
  out.is_file = true;
  out.symlink = e->is_link();
  out.executable = e->mode == 0100755;
  out.content = reader_->objects().read(e->id, ObjectType::blob).data;
  return out;
}

std::vector<std::string> CommitTree::list(const std::string& path) const {
  std::vector<std::string> names;
  std::string tree = root_;  // "" is the root, which has no entry of its own
  if (!path.empty()) {
    std::optional<TreeEntry> e = entry(path);
    if (!e || !e->is_tree()) return names;
    tree = e->id;
  }
  for (auto& t : parse_tree(reader_->objects().read(tree, ObjectType::tree).data, "tree " + tree))
    if (t.is_blob()) names.push_back(std::move(t.name));
  std::sort(names.begin(), names.end());
  return names;
}

std::optional<std::string> file_at(const fs::path& repo, const std::string& rev,
                                   const std::string& path) {
  return Reader(repo).file_at(rev, path);
}

std::vector<CommitInfo> branch_commits(const fs::path& repo, const std::string& branch,
                                       const std::string& base) {
  return Reader(repo).branch_commits(branch, base);
}

std::pair<std::string, std::string> head_of(const fs::path& repo) {
  return Reader(repo).head();
}

bool branch_exists(const fs::path& repo, const std::string& branch) {
  return Reader(repo).branch_exists(branch);
}

}  // namespace kd::git
