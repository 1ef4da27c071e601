#include "git/repo.h"

#include <fcntl.h>
#include <git2.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dirent.h>

#include <cctype>
#include <cerrno>
#include <memory>
#include <mutex>

#include "common/errors.h"
#include "common/fd.h"
#include "common/files.h"
#include "common/text.h"

namespace kd::git {
namespace {

template <class T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const { Free(p); }
};
template <class T, void (*Free)(T*)>
using Handle = std::unique_ptr<T, Deleter<T, Free>>;

using Repo = Handle<git_repository, git_repository_free>;
using Ref = Handle<git_reference, git_reference_free>;
using Commit = Handle<git_commit, git_commit_free>;
using Tree = Handle<git_tree, git_tree_free>;
using Index = Handle<git_index, git_index_free>;
using Sig = Handle<git_signature, git_signature_free>;
using Walk = Handle<git_revwalk, git_revwalk_free>;
using Diff = Handle<git_diff, git_diff_free>;
using Status = Handle<git_status_list, git_status_list_free>;
using Worktree = Handle<git_worktree, git_worktree_free>;
using Object = Handle<git_object, git_object_free>;
using Blob = Handle<git_blob, git_blob_free>;

void init() {
  static std::once_flag once;
  std::call_once(once, [] {
    git_libgit2_init();
    // The box runs as the worktree's owner, so as root the worktree is not root's. Owner checks
    // guard against repository config running programs, which libgit2 never does, and we open
    // only repositories whose paths we derived ourselves.
    git_libgit2_opts(GIT_OPT_SET_OWNER_VALIDATION, 0);
  });
}

// Throws kd::Error "<call>(<object>): <libgit2 message>" when rc < 0.
void check(int rc, const std::string& call, const std::string& object) {
  if (rc >= 0) return;
  const git_error* e = git_error_last();
  throw Error(call + "(" + object +
              "): " + (e && e->message ? e->message : "libgit2 error " + std::to_string(rc)));
}

bool is_safe_entry_name(const std::string& name) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos)
    return false;
  return lower(name) != ".git";
}

// Writes `tree` into the directory `dir` (which this process made): files with their git mode,
// symbolic links as links, submodules as empty directories. Every entry is made relative to its
// parent's descriptor and never replaces anything, so a crafted tree (a repeated name, "..", a
// name with '/') is refused instead of written elsewhere. No filter, attribute or config of the
// repository applies: the snapshot is the committed bytes.
void write_tree(git_repository* repo, const git_tree* tree, int dir, const std::string& where) {
  for (size_t i = 0, n = git_tree_entrycount(tree); i < n; ++i) {
    const git_tree_entry* e = git_tree_entry_byindex(tree, i);
    const std::string name = git_tree_entry_name(e);
    const std::string path = where + "/" + name;
    if (!is_safe_entry_name(name))
      throw Error("snapshot: tree entry " + quote(path) + " is not a safe file name");
    const git_filemode_t mode = git_tree_entry_filemode(e);
    if (mode == GIT_FILEMODE_TREE || mode == GIT_FILEMODE_COMMIT) {
      if (::mkdirat(dir, name.c_str(), 0755) != 0) throw_sys("mkdirat", quote(path), errno);
      if (mode == GIT_FILEMODE_COMMIT) continue;  // a submodule: its directory, empty
      UniqueFd sub(::openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (sub.get() < 0) throw_sys("openat", quote(path), errno);
      git_tree* t = nullptr;
      check(git_tree_lookup(&t, repo, git_tree_entry_id(e)), "git_tree_lookup", path);
      Tree subtree(t);
      write_tree(repo, t, sub.get(), path);
      continue;
    }
    if (mode != GIT_FILEMODE_BLOB && mode != GIT_FILEMODE_BLOB_EXECUTABLE &&
        mode != GIT_FILEMODE_LINK) {
      throw Error("snapshot: tree entry " + quote(path) + " has an unknown mode " +
                  std::to_string(int(mode)));
    }
    git_blob* b = nullptr;
    check(git_blob_lookup(&b, repo, git_tree_entry_id(e)), "git_blob_lookup", path);
    Blob blob(b);
    const char* data = static_cast<const char*>(git_blob_rawcontent(b));
    const size_t size = size_t(git_blob_rawsize(b));
    if (mode == GIT_FILEMODE_LINK) {
      const std::string target(data, size);
      if (::symlinkat(target.c_str(), dir, name.c_str()) != 0)
        throw_sys("symlinkat", quote(path) + " -> " + quote(target), errno);
      continue;
    }
    UniqueFd f(::openat(dir, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                        mode == GIT_FILEMODE_BLOB_EXECUTABLE ? 0755 : 0644));
    if (f.get() < 0) throw_sys("openat", quote(path) + ", O_CREAT|O_EXCL", errno);
    for (size_t off = 0; off < size;) {
      ssize_t w = ::write(f.get(), data + off, size - off);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) throw_sys("write", quote(path), errno);
      off += size_t(w);
    }
  }
}

Repo open_repo(const std::filesystem::path& path) {
  init();
  git_repository* r = nullptr;
  check(git_repository_open_ext(&r, path.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr),
        "git_repository_open", quote(path.string()));
  return Repo(r);
}

std::string oid_hex(const git_oid* oid) {
  char buf[GIT_OID_HEXSZ + 1];
  git_oid_tostr(buf, sizeof buf, oid);
  return buf;
}

Commit branch_tip(git_repository* repo, const std::string& branch, const std::string& where) {
  git_reference* ref = nullptr;
  check(git_branch_lookup(&ref, repo, branch.c_str(), GIT_BRANCH_LOCAL), "git_branch_lookup",
        where + ", " + quote(branch));
  Ref owned(ref);
  git_object* obj = nullptr;
  check(git_reference_peel(&obj, ref, GIT_OBJECT_COMMIT), "git_reference_peel", quote(branch));
  return Commit(reinterpret_cast<git_commit*>(obj));
}

bool has_branch(git_repository* repo, const std::string& branch) {
  git_reference* ref = nullptr;
  int rc = git_branch_lookup(&ref, repo, branch.c_str(), GIT_BRANCH_LOCAL);
  if (rc == 0) git_reference_free(ref);
  if (rc == GIT_ENOTFOUND) return false;
  check(rc, "git_branch_lookup", quote(branch));
  return true;
}

void create_branch(git_repository* repo, const std::string& branch, const git_commit* at) {
  git_reference* ref = nullptr;
  check(git_branch_create(&ref, repo, branch.c_str(), at, /*force=*/0), "git_branch_create",
        quote(branch));
  git_reference_free(ref);
}

// Never reuse or reset a branch that exists (a prior campaign's durable record): suffix it.
std::string free_branch_name(git_repository* repo, const WorktreeRequest& ref,
                             std::vector<std::string>& notes) {
  std::string wanted = ref.branch_name(0);
  if (!has_branch(repo, wanted)) return wanted;
  for (int n = 1;; ++n) {
    std::string name = ref.branch_name(n);
    if (!has_branch(repo, name)) {
      notes.push_back("branch " + wanted + " already exists and is kept untouched; using " + name);
      return name;
    }
  }
}

// The worktree's .git must be the file libgit2 wrote, naming our admin dir; a rewritten .git
// would redirect host-side git elsewhere.
void check_dot_git(const std::filesystem::path& worktree, const std::filesystem::path& gitdir) {
  std::filesystem::path dot = worktree / ".git";
  UniqueFd fd(::open(dot.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) throw_sys("open", quote(dot.string()) + ", O_NOFOLLOW", errno);
  char buf[4096];
  ssize_t n = ::read(fd.get(), buf, sizeof buf);
  std::string content(buf, n > 0 ? static_cast<size_t>(n) : 0);
  auto strip = [](std::string p) {
    while (p.size() > 1 && p.back() == '/')
      p.pop_back();
    return p;
  };
  constexpr std::string_view kPrefix = "gitdir: ";
  bool ok = content.size() > kPrefix.size() + 1 &&
            content.compare(0, kPrefix.size(), kPrefix) == 0 && content.back() == '\n' &&
            strip(content.substr(kPrefix.size(), content.size() - kPrefix.size() - 1)) ==
                strip(gitdir.string());
  if (!ok) {
    throw Error(quote(dot.string()) + " does not point at " + quote(gitdir.string()) +
                "; refusing to run git on a redirected worktree");
  }
}

// Stages `paths` (every change when empty) in the repository's index, in memory. Refuses a
// file larger than `max_file_bytes`: artifacts stay out of git.
Index stage(git_repository* repo, const std::filesystem::path& worktree,
            const std::vector<std::string>& paths, std::uint64_t max_file_bytes) {
  git_index* idx = nullptr;
  check(git_repository_index(&idx, repo), "git_repository_index", quote(worktree.string()));
  Index index(idx);
  std::vector<const char*> specs;
  for (const auto& p : paths)
    specs.push_back(p.c_str());
  if (specs.empty()) specs.push_back("*");
  git_strarray pathspec = {const_cast<char**>(specs.data()), specs.size()};
  check(git_index_add_all(idx, &pathspec, GIT_INDEX_ADD_DEFAULT, nullptr, nullptr),
        "git_index_add_all", quote(worktree.string()));
  check(git_index_update_all(idx, &pathspec, nullptr, nullptr), "git_index_update_all",
        quote(worktree.string()));
  for (size_t i = 0; i < git_index_entrycount(idx); ++i) {
    const git_index_entry* e = git_index_get_byindex(idx, i);
    if (e->file_size > max_file_bytes) {
      throw Error("refusing to commit " + quote(e->path) + ": " + std::to_string(e->file_size) +
                  " bytes is over the " + std::to_string(max_file_bytes) +
                  "-byte limit (artifacts stay out of git)");
    }
  }
  return index;
}

git_signature* signature(const char* signer) {
  git_signature* sig = nullptr;
  check(git_signature_now(&sig, signer, "kdispatch@kdispatch.invalid"), "git_signature_now",
        signer);
  return sig;
}

// The names in the directory `dir` (not "." or ".."), read through a descriptor of our own.
std::vector<std::string> entries_of(int dir, const std::string& where) {
  int copy = ::openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (copy < 0) throw_sys("openat", quote(where), errno);
  DIR* d = ::fdopendir(copy);
  if (!d) {
    ::close(copy);
    throw_sys("fdopendir", quote(where), errno);
  }
  std::vector<std::string> names;
  while (dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  ::closedir(d);
  return names;
}

UniqueFd open_subdir(int dir, const std::string& name, const std::string& where) {
  UniqueFd sub(::openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!sub) throw_sys("openat", quote(where) + ", O_DIRECTORY|O_NOFOLLOW", errno);
  return sub;
}

const char* special_kind(mode_t mode) {
  if (S_ISFIFO(mode)) return "FIFO";
  if (S_ISSOCK(mode)) return "socket";
  if (S_ISCHR(mode)) return "character device";
  if (S_ISBLK(mode)) return "block device";
  return "special file";
}

// Whether `committed` has a symbolic link at `rel` with exactly `target`.
bool committed_link(git_repository* repo, const git_tree* committed, const std::string& rel,
                    const std::string& target) {
  git_tree_entry* e = nullptr;
  if (git_tree_entry_bypath(&e, committed, rel.c_str()) != 0) return false;
  const bool link = git_tree_entry_filemode(e) == GIT_FILEMODE_LINK;
  git_blob* b = nullptr;
  bool same = false;
  if (link && git_blob_lookup(&b, repo, git_tree_entry_id(e)) == 0) {
    same = std::string(static_cast<const char*>(git_blob_rawcontent(b)),
                       size_t(git_blob_rawsize(b))) == target;
    git_blob_free(b);
  }
  git_tree_entry_free(e);
  return same;
}

// Proves the tree an author left holds nothing but directories, regular files and the symbolic
// links `committed` has at the same place with the same target, before any path-based git code
// reads it: every other link and every special file (a FIFO would hang a read, a link would
// carry a host-side read or write outside the tree) is removed, through descriptors, and named
// in `notes` with its target (only named when `remove` is false: the survey). Nothing is
// followed: each directory is opened O_NOFOLLOW beneath its parent's descriptor.
void remove_unproven(git_repository* repo, const git_tree* committed, int dir,
                     const std::string& rel_dir, const std::string& where, bool remove,
                     std::vector<std::string>& notes) {
  for (const std::string& name : entries_of(dir, where + "/" + rel_dir)) {
    if (rel_dir.empty() && name == ".git") continue;  // checked by check_dot_git
    const std::string rel = rel_dir.empty() ? name : rel_dir + "/" + name;
    struct stat st;
    if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
      throw_sys("fstatat", quote(where + "/" + rel), errno);
    if (S_ISDIR(st.st_mode)) {
      UniqueFd sub = open_subdir(dir, name, where + "/" + rel);
      remove_unproven(repo, committed, sub.get(), rel, where, remove, notes);
      continue;
    }
    if (S_ISREG(st.st_mode)) continue;
    std::string what;
    if (S_ISLNK(st.st_mode)) {
      char buf[4096];
      const ssize_t n = ::readlinkat(dir, name.c_str(), buf, sizeof buf);
      if (n < 0) throw_sys("readlinkat", quote(where + "/" + rel), errno);
      const std::string target(buf, size_t(n));
      if (committed_link(repo, committed, rel, target)) continue;
      what = "symbolic link " + quote(rel) + " -> " + quote(target);
    } else {
      what = std::string(special_kind(st.st_mode)) + " " + quote(rel);
    }
    if (!remove) {
      notes.push_back("uncommitted " + what);
      continue;
    }
    if (::unlinkat(dir, name.c_str(), 0) != 0)
      throw_sys("unlinkat", quote(where + "/" + rel), errno);
    notes.push_back("removed the uncommitted " + what +
                    " before keeping the leftovers (not followed, not kept)");
  }
}

// Committed directories that are no longer directories in the tree (renamed, removed or
// replaced), looked up beneath the descriptor of their parent.
void missing_directories(git_repository* repo, const git_tree* tree, int dir,
                         const std::string& rel_dir, std::vector<std::string>& notes) {
  for (size_t i = 0, n = git_tree_entrycount(tree); i < n; ++i) {
    const git_tree_entry* e = git_tree_entry_byindex(tree, i);
    if (git_tree_entry_filemode(e) != GIT_FILEMODE_TREE) continue;
    const std::string name = git_tree_entry_name(e);
    const std::string rel = rel_dir.empty() ? name : rel_dir + "/" + name;
    struct stat st;
    if (!is_safe_entry_name(name) || ::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISDIR(st.st_mode)) {
      notes.push_back("committed directory " + quote(rel) +
                      " is no longer a directory there (renamed, removed or replaced)");
      continue;
    }
    UniqueFd sub(::openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    git_tree* t = nullptr;
    if (!sub || git_tree_lookup(&t, repo, git_tree_entry_id(e)) != 0) continue;
    Tree subtree(t);
    missing_directories(repo, t, sub.get(), rel, notes);
  }
}

// Empties the directory `dir` (its top-level .git file stays) through descriptors: a link is
// removed as a link, never followed, so nothing outside the tree is deleted.
void clear_tree(int dir, const std::string& where, bool top) {
  for (const std::string& name : entries_of(dir, where)) {
    if (top && name == ".git") continue;
    struct stat st;
    if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
      throw_sys("fstatat", quote(where + "/" + name), errno);
    if (S_ISDIR(st.st_mode)) {
      UniqueFd sub = open_subdir(dir, name, where + "/" + name);
      clear_tree(sub.get(), where + "/" + name, false);
    }
    if (::unlinkat(dir, name.c_str(), S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) != 0)
      throw_sys("unlinkat", quote(where + "/" + name), errno);
  }
}

// Files the leftovers commit does not take (ignored by the tree's .gitignore): named in the
// note, since the fresh checkout does not carry them over.
std::vector<std::string> ignored_files(git_repository* repo, const std::filesystem::path& where) {
  git_status_options opts = GIT_STATUS_OPTIONS_INIT;
  opts.flags = GIT_STATUS_OPT_INCLUDE_IGNORED | GIT_STATUS_OPT_RECURSE_IGNORED_DIRS;
  git_status_list* list = nullptr;
  check(git_status_list_new(&list, repo, &opts), "git_status_list_new", quote(where.string()));
  Status owned(list);
  std::vector<std::string> out;
  for (size_t i = 0; i < git_status_list_entrycount(list); ++i) {
    const git_status_entry* e = git_status_byindex(list, i);
    if ((e->status & GIT_STATUS_IGNORED) && e->index_to_workdir)
      out.push_back(e->index_to_workdir->new_file.path);
  }
  return out;
}

// What the previous experiment left uncommitted in the worktree is kept, not lost and not
// carried over (program.md: commit the foreign state to its branch's side first, record it):
// a commit on top of that branch's tip under refs/kdispatch/leftovers/, the branch itself
// untouched. Returns the note to record, or nothing when the worktree is clean.
std::optional<std::string> keep_leftovers(git_repository* home, git_repository* repo,
                                          const std::filesystem::path& where, git_reference* head) {
  git_status_options opts = GIT_STATUS_OPTIONS_INIT;
  opts.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED | GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS;
  git_status_list* list = nullptr;
  check(git_status_list_new(&list, repo, &opts), "git_status_list_new", quote(where.string()));
  Status owned(list);
  const size_t n = git_status_list_entrycount(list);
  if (n == 0) return std::nullopt;
  const std::string branch = git_reference_shorthand(head);
  git_object* tip_obj = nullptr;
  check(git_reference_peel(&tip_obj, head, GIT_OBJECT_COMMIT), "git_reference_peel", branch);
  Commit tip(reinterpret_cast<git_commit*>(tip_obj));
  Index index = stage(repo, where, {}, kMaxCommittedFileBytes);
  git_oid tree_id;
  check(git_index_write_tree(&tree_id, index.get()), "git_index_write_tree", quote(where.string()));
  git_tree* tree_raw = nullptr;
  check(git_tree_lookup(&tree_raw, repo, &tree_id), "git_tree_lookup", oid_hex(&tree_id));
  Tree tree(tree_raw);
  Sig sig(signature("kdispatch"));
  const std::string message = "kdispatch: " + std::to_string(n) +
                              " uncommitted change(s) left on " + branch +
                              ", kept before the worktree moved on\n";
  git_oid id;
  const git_commit* parents[] = {tip.get()};
  check(git_commit_create(&id, repo, nullptr, sig.get(), sig.get(), "UTF-8", message.c_str(),
                          tree.get(), 1, parents),
        "git_commit_create", "leftovers of " + branch);
  // Never replaces an earlier keep of the same branch. Made through the shared repository: from
  // a worktree, libgit2 (1.5) overwrites an existing shared ref despite force=0.
  for (int k = 1;; ++k) {
    std::string name =
        "refs/kdispatch/leftovers/" + branch + (k > 1 ? "-" + std::to_string(k) : "");
    git_reference* made = nullptr;
    int rc = git_reference_create(&made, home, name.c_str(), &id, 0, "kdispatch: leftovers");
    if (rc == GIT_EEXISTS) continue;
    check(rc, "git_reference_create", name);
    git_reference_free(made);
    return std::to_string(n) + " uncommitted change(s) on " + branch + " kept as " + name + " (" +
           oid_hex(&id) + ")";
  }
}

// Stages `paths` (every change when empty) and commits on HEAD, which must be `branch`.
CommitInfo commit_on_head(const std::filesystem::path& worktree, const std::string& branch,
                          const std::string& message, const std::vector<std::string>& paths,
                          std::uint64_t max_file_bytes, const char* signer) {
  Repo repo = open_repo(worktree);
  git_reference* head = nullptr;
  check(git_repository_head(&head, repo.get()), "git_repository_head", quote(worktree.string()));
  Ref owned_head(head);
  if (std::string("refs/heads/") + branch != git_reference_name(head)) {
    throw Error("worktree " + quote(worktree.string()) + " is on " + git_reference_name(head) +
                ", not " + branch);
  }
  git_object* parent_obj = nullptr;
  check(git_reference_peel(&parent_obj, head, GIT_OBJECT_COMMIT), "git_reference_peel", branch);
  Commit parent(reinterpret_cast<git_commit*>(parent_obj));

  Index index = stage(repo.get(), worktree, paths, max_file_bytes);
  git_oid tree_id;
  check(git_index_write_tree(&tree_id, index.get()), "git_index_write_tree",
        quote(worktree.string()));
  if (git_oid_equal(&tree_id, git_commit_tree_id(parent.get()))) {
    throw Error("nothing to commit: the worktree equals " + branch + "'s last commit");
  }
  check(git_index_write(index.get()), "git_index_write", quote(worktree.string()));
  git_tree* tree_raw = nullptr;
  check(git_tree_lookup(&tree_raw, repo.get(), &tree_id), "git_tree_lookup", oid_hex(&tree_id));
  Tree tree(tree_raw);
  Sig sig(signature(signer));
  git_oid id;
  const git_commit* parents[] = {parent.get()};
  check(git_commit_create(&id, repo.get(), "HEAD", sig.get(), sig.get(), "UTF-8", message.c_str(),
                          tree.get(), 1, parents),
        "git_commit_create", branch);
  return {oid_hex(&id), message, static_cast<std::int64_t>(sig->when.time)};
}

}  // namespace

WorktreeSetup prepare_worktree(const WorktreeRequest& ref,
                               const std::optional<std::string>& resume_branch) {
  Repo home = open_repo(ref.home_repo);
  WorktreeSetup out;
  out.worktree = ref.worktree;
  out.gitdir =
      std::filesystem::path(git_repository_commondir(home.get())) / "worktrees" / ref.worktree_name;
  out.gitdir = out.gitdir.lexically_normal();

  Commit base = branch_tip(home.get(), ref.integration_branch, quote(ref.home_repo.string()));
  out.base_commit = oid_hex(git_commit_id(base.get()));
  if (resume_branch && has_branch(home.get(), *resume_branch)) {
    out.branch = *resume_branch;
  } else {
    out.branch = free_branch_name(home.get(), ref, out.notes);
    create_branch(home.get(), out.branch, base.get());
  }
  std::string refname = "refs/heads/" + out.branch;

  std::error_code ec;
  if (std::filesystem::exists(std::filesystem::symlink_status(ref.worktree)) &&
      !std::filesystem::exists(out.gitdir / "HEAD", ec)) {
    // An add cut short (the process killed between libgit2's writes): the worktree's admin dir
    // never got its HEAD, so no prepare returned and no session ran there. Made again.
    if (std::filesystem::exists(std::filesystem::symlink_status(ref.worktree / ".git")))
      check_dot_git(ref.worktree, out.gitdir);
    UniqueFd top(::open(ref.worktree.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!top) throw_sys("open", quote(ref.worktree.string()) + ", O_DIRECTORY|O_NOFOLLOW", errno);
    clear_tree(top.get(), ref.worktree.string(), false);
    if (::rmdir(ref.worktree.c_str()) != 0) throw_sys("rmdir", quote(ref.worktree.string()), errno);
    std::filesystem::remove_all(out.gitdir);
    out.notes.push_back("the worktree of an interrupted add was made again");
  }
  if (!std::filesystem::exists(ref.worktree)) {
    std::filesystem::create_directories(ref.worktree.parent_path());
    // Families add worktrees to one repository at once, and libgit2's add is not safe against
    // itself: its mkdir of the shared worktrees/ directory fails when another add made it
    // first, and a half-made sibling reads as "reference is already checked out".
    std::filesystem::create_directories(out.gitdir.parent_path());
    static std::mutex adding;
    std::lock_guard<std::mutex> serial(adding);
    git_reference* branch_ref = nullptr;
    check(git_reference_lookup(&branch_ref, home.get(), refname.c_str()), "git_reference_lookup",
          refname);
    Ref owned(branch_ref);
    git_worktree_add_options opts = GIT_WORKTREE_ADD_OPTIONS_INIT;
    opts.ref = branch_ref;
    git_worktree* wt = nullptr;
    check(git_worktree_add(&wt, home.get(), ref.worktree_name.c_str(), ref.worktree.c_str(), &opts),
          "git_worktree_add", quote(ref.worktree.string()) + ", " + quote(out.branch));
    Worktree owned_wt(wt);
    return out;
  }

  check_dot_git(ref.worktree, out.gitdir);
  Repo wt = open_repo(ref.worktree);
  git_reference* head = nullptr;
  check(git_repository_head(&head, wt.get()), "git_repository_head", quote(ref.worktree.string()));
  Ref owned_head(head);
  if (refname == git_reference_name(head)) return out;  // resuming on our own branch
  // The tree is the previous author's: no path-based code (libgit2's status, add, checkout) runs
  // on it as root until it holds nothing a path could be redirected by (docs/dispatcher.md).
  const std::string where = ref.worktree.string();
  UniqueFd top(::open(ref.worktree.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!top) throw_sys("open", quote(where) + ", O_DIRECTORY|O_NOFOLLOW", errno);
  {
    git_object* head_tree = nullptr;
    check(git_reference_peel(&head_tree, head, GIT_OBJECT_TREE), "git_reference_peel",
          git_reference_name(head));
    Object owned_tree(head_tree);
    remove_unproven(wt.get(), reinterpret_cast<const git_tree*>(head_tree), top.get(), "", where,
                    true, out.notes);
  }
  if (auto kept = keep_leftovers(home.get(), wt.get(), ref.worktree, head))
    out.notes.push_back(*kept);
  const std::vector<std::string> ignored = ignored_files(wt.get(), ref.worktree);
  if (!ignored.empty()) {
    std::string names;
    for (size_t i = 0; i < ignored.size() && i < 5; ++i)
      names += (i ? ", " : "") + quote(ignored[i]);
    out.notes.push_back(std::to_string(ignored.size()) + " ignored file(s) not carried over (" +
                        names + (ignored.size() > 5 ? ", ..." : "") + ")");
  }
  // The new branch is written into an emptied directory: no write lands on a path the author
  // arranged, and the new branch starts from exactly its commit.
  clear_tree(top.get(), where, true);
  // Keeping staged the leftovers in the repository's index, in memory only: back to the index on
  // disk (the previous branch's), so the checkout moves from exactly that state.
  git_index* index = nullptr;
  check(git_repository_index(&index, wt.get()), "git_repository_index", quote(where));
  Index owned_index(index);
  check(git_index_read(index, /*force=*/1), "git_index_read", quote(where));
  Commit tip = branch_tip(wt.get(), out.branch, quote(ref.worktree.string()));
  git_checkout_options co = GIT_CHECKOUT_OPTIONS_INIT;
  co.checkout_strategy = GIT_CHECKOUT_FORCE;
  check(git_checkout_tree(wt.get(), reinterpret_cast<const git_object*>(tip.get()), &co),
        "git_checkout_tree", quote(ref.worktree.string()) + ", " + quote(out.branch));
  check(git_repository_set_head(wt.get(), refname.c_str()), "git_repository_set_head", refname);
  return out;
}

std::vector<std::string> survey_worktree(const std::filesystem::path& worktree,
                                         const std::filesystem::path& gitdir) {
  check_dot_git(worktree, gitdir);
  Repo wt = open_repo(worktree);
  git_object* head_tree = nullptr;
  check(git_revparse_single(&head_tree, wt.get(), "HEAD^{tree}"), "git_revparse_single",
        quote(worktree.string()) + ", HEAD^{tree}");
  Object owned(head_tree);
  const auto* tree = reinterpret_cast<const git_tree*>(head_tree);
  UniqueFd top(::open(worktree.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!top) throw_sys("open", quote(worktree.string()) + ", O_DIRECTORY|O_NOFOLLOW", errno);
  std::vector<std::string> found;
  remove_unproven(wt.get(), tree, top.get(), "", worktree.string(), false, found);
  missing_directories(wt.get(), tree, top.get(), "", found);
  return found;
}

CommitInfo commit_all(const std::filesystem::path& worktree, const std::filesystem::path& gitdir,
                      const std::string& branch, const std::string& message,
                      const std::vector<std::string>& paths, std::uint64_t max_file_bytes) {
  check_dot_git(worktree, gitdir);
  return commit_on_head(worktree, branch, message, paths, max_file_bytes, "kdispatch author");
}

CommitInfo commit_files(const std::filesystem::path& repo, const std::vector<std::string>& paths,
                        const std::string& message) {
  auto [sha, branch] = head_of(repo);
  if (branch.empty()) throw Error("repository " + quote(repo.string()) + " has a detached HEAD");
  return commit_on_head(repo, branch, message, paths, kMaxCommittedFileBytes, "kdispatch");
}

std::string diff_worktree(const std::filesystem::path& worktree, std::size_t max_bytes,
                          const std::string& pathspec) {
  Repo repo = open_repo(worktree);
  git_object* head_tree = nullptr;
  check(git_revparse_single(&head_tree, repo.get(), "HEAD^{tree}"), "git_revparse_single",
        "HEAD^{tree}");
  Object owned(head_tree);
  git_diff_options opts = GIT_DIFF_OPTIONS_INIT;
  opts.flags = GIT_DIFF_INCLUDE_UNTRACKED | GIT_DIFF_RECURSE_UNTRACKED_DIRS |
               GIT_DIFF_SHOW_UNTRACKED_CONTENT;
  const char* spec = pathspec.c_str();
  if (!pathspec.empty()) opts.pathspec = {const_cast<char**>(&spec), 1};
  git_diff* d = nullptr;
  check(git_diff_tree_to_workdir_with_index(&d, repo.get(), reinterpret_cast<git_tree*>(head_tree),
                                            &opts),
        "git_diff_tree_to_workdir_with_index", quote(worktree.string()));
  Diff diff(d);
  git_buf buf = GIT_BUF_INIT;
  check(git_diff_to_buf(&buf, d, GIT_DIFF_FORMAT_PATCH), "git_diff_to_buf",
        quote(worktree.string()));
  std::string out(buf.ptr, buf.size);
  git_buf_dispose(&buf);
  if (out.size() > max_bytes) {
    out.resize(max_bytes);
    out += "\n[diff cut at " + std::to_string(max_bytes) + " bytes]\n";
  }
  return out;
}

void snapshot_commit(const std::filesystem::path& repo_path, const std::string& sha,
                     const std::filesystem::path& dest) {
  if (std::filesystem::exists(dest))
    throw Error("snapshot target " + quote(dest.string()) + " already exists");
  Repo repo = open_repo(repo_path);
  git_oid oid;
  check(git_oid_fromstr(&oid, sha.c_str()), "git_oid_fromstr", quote(sha));
  git_commit* c = nullptr;
  check(git_commit_lookup(&c, repo.get(), &oid), "git_commit_lookup", sha);
  Commit commit(c);
  git_tree* t = nullptr;
  check(git_commit_tree(&t, c), "git_commit_tree", sha);
  Tree tree(t);
  std::filesystem::create_directories(dest);
  UniqueFd dir(::open(dest.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (dir.get() < 0) throw_sys("open", quote(dest.string()), errno);
  write_tree(repo.get(), t, dir.get(), dest.string());
}

std::string commit_directory(const std::filesystem::path& dir, const std::string& branch,
                             const std::string& message, std::int64_t unix_time,
                             const std::vector<std::string>& leave_out) {
  init();
  const std::string where = quote(dir.string());
  git_repository* r = nullptr;
  if (git_repository_open_ext(&r, dir.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr) != 0) {
    git_repository_init_options opts = GIT_REPOSITORY_INIT_OPTIONS_INIT;
    opts.flags = GIT_REPOSITORY_INIT_MKPATH;
    const std::string head = "refs/heads/" + branch;
    opts.initial_head = head.c_str();
    check(git_repository_init_ext(&r, dir.c_str(), &opts), "git_repository_init", where);
  }
  Repo repo(r);
  git_index* idx = nullptr;
  check(git_repository_index(&idx, r), "git_repository_index", where);
  Index index(idx);
  check(git_index_add_all(idx, nullptr, GIT_INDEX_ADD_DEFAULT, nullptr, nullptr),
        "git_index_add_all", where);
  check(git_index_update_all(idx, nullptr, nullptr, nullptr), "git_index_update_all", where);
  for (const auto& rel : leave_out)
    check(git_index_remove_bypath(idx, rel.c_str()), "git_index_remove_bypath",
          quote((dir / rel).string()));
  check(git_index_write(idx), "git_index_write", where);
  git_oid tree_id, commit_id;
  check(git_index_write_tree(&tree_id, idx), "git_index_write_tree", where);
  git_tree* t = nullptr;
  check(git_tree_lookup(&t, r, &tree_id), "git_tree_lookup", where);
  Tree tree(t);
  git_signature* sg = nullptr;
  check(git_signature_new(&sg, "kdispatch example", "example@kdispatch.invalid",
                          git_time_t(unix_time), 0),
        "git_signature_new", where);
  Sig sig(sg);
  Commit parent;
  git_reference* h = nullptr;
  if (git_repository_head(&h, r) == 0) {
    Ref head(h);
    git_commit* p = nullptr;
    check(git_commit_lookup(&p, r, git_reference_target(h)), "git_commit_lookup", where);
    parent.reset(p);
  }
  const git_commit* parents[] = {parent.get()};
  const std::string ref = "refs/heads/" + branch;
  check(git_commit_create(&commit_id, r, ref.c_str(), sig.get(), sig.get(), nullptr,
                          message.c_str(), tree.get(), parent ? 1 : 0, parents),
        "git_commit_create", where);
  return oid_hex(&commit_id);
}

}  // namespace kd::git
