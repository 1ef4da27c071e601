#include "dispatcher/example_wiki.h"

#include <git2.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "common/files.h"
#include "common/policy_path.h"

namespace fs = std::filesystem;

namespace kd::dispatcher {
namespace {

constexpr git_time_t kFixedTime = 1795996800;  // 2026-11-30T00:00:00Z
constexpr const char* kHomeRepo = "normkit";
constexpr const char* kHomeBranch = "integration";

[[noreturn]] void git_fail(const std::string& call, const fs::path& object, int rc) {
  const git_error* e = git_error_last();
  throw Error(call + "(" + quote(object.string()) +
              "): " + (e && e->message ? e->message : "libgit2 error " + std::to_string(rc)));
}

void check(int rc, const char* call, const fs::path& object) {
  if (rc < 0) git_fail(call, object, rc);
}

template <typename T, void (*Free)(T*)>
struct Owned {
  T* p = nullptr;
  ~Owned() {
    if (p) Free(p);
  }
};

void copy_tree(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::create_directories(to, ec);
  fs::copy(from, to, fs::copy_options::recursive | fs::copy_options::overwrite_existing, ec);
  if (ec)
    throw Error("copy(" + quote(from.string()) + " -> " + quote(to.string()) +
                "): " + ec.message());
}

// A path from case.json: relative, without "..", so an overlay cannot touch anything else.
fs::path inside(const fs::path& root, const std::string& rel, const fs::path& manifest) {
  if (rel.empty() || rel[0] == '/' || rel.find("..") != std::string::npos)
    throw Error(manifest.string() + ": path " + quote(rel) + " must be relative, without '..'");
  return root / rel;
}

}  // namespace

std::string commit_all(const fs::path& dir, const std::string& branch, const std::string& message,
                       const std::vector<std::string>& leave_out) {
  git_libgit2_init();
  Owned<git_repository, git_repository_free> repo;
  if (git_repository_open_ext(&repo.p, dir.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr) != 0) {
    git_repository_init_options opts = GIT_REPOSITORY_INIT_OPTIONS_INIT;
    opts.flags = GIT_REPOSITORY_INIT_MKPATH;
    std::string head = "refs/heads/" + branch;
    opts.initial_head = head.c_str();
    check(git_repository_init_ext(&repo.p, dir.c_str(), &opts), "git_repository_init", dir);
  }
  Owned<git_index, git_index_free> index;
  check(git_repository_index(&index.p, repo.p), "git_repository_index", dir);
  check(git_index_add_all(index.p, nullptr, GIT_INDEX_ADD_DEFAULT, nullptr, nullptr),
        "git_index_add_all", dir);
  check(git_index_update_all(index.p, nullptr, nullptr, nullptr), "git_index_update_all", dir);
  for (const auto& rel : leave_out)
    check(git_index_remove_bypath(index.p, rel.c_str()), "git_index_remove_bypath", dir / rel);
  check(git_index_write(index.p), "git_index_write", dir);
  git_oid tree_id, commit_id;
  check(git_index_write_tree(&tree_id, index.p), "git_index_write_tree", dir);
  Owned<git_tree, git_tree_free> tree;
  check(git_tree_lookup(&tree.p, repo.p, &tree_id), "git_tree_lookup", dir);
  Owned<git_signature, git_signature_free> sig;
  check(git_signature_new(&sig.p, "kdispatch example", "example@kdispatch.invalid", kFixedTime, 0),
        "git_signature_new", dir);
  Owned<git_reference, git_reference_free> head;
  Owned<git_commit, git_commit_free> parent;
  if (git_repository_head(&head.p, repo.p) == 0) {
    check(git_commit_lookup(&parent.p, repo.p, git_reference_target(head.p)), "git_commit_lookup",
          dir);
  }
  const git_commit* parents[] = {parent.p};
  std::string ref = "refs/heads/" + branch;
  check(git_commit_create(&commit_id, repo.p, ref.c_str(), sig.p, sig.p, nullptr, message.c_str(),
                          tree.p, parent.p ? 1 : 0, parents),
        "git_commit_create", dir);
  char hex[GIT_OID_HEXSZ + 1];
  git_oid_tostr(hex, sizeof hex, &commit_id);
  return hex;
}

std::vector<RefusalCase> example_refusal_cases() {
  std::vector<RefusalCase> out;
  fs::path root = examples_dir() / "refusal-cases";
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(root))
    if (e.is_directory()) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  for (const auto& d : dirs) {
    fs::path manifest = d / "case.json";
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(read_file(manifest));
      out.push_back({d.filename().string(), j.at("item").get<std::string>(),
                     j.at("reason").get<std::string>()});
    } catch (const nlohmann::json::exception& e) {
      throw Error(manifest.string() + ": " + e.what());
    }
  }
  return out;
}

MaterializedExample materialize_example(const fs::path& dest, const ExampleOptions& options) {
  std::error_code ec;
  if (fs::exists(dest, ec) && !fs::is_empty(dest, ec))
    throw Error("materialize_example(" + quote(dest.string()) + "): directory is not empty");
  fs::path examples = examples_dir();
  copy_tree(examples / "wiki", dest);

  nlohmann::json manifest = nlohmann::json::object();
  fs::path case_dir;
  if (options.refusal_case) {
    case_dir = examples / "refusal-cases" / *options.refusal_case;
    fs::path mpath = case_dir / "case.json";
    try {
      manifest = nlohmann::json::parse(read_file(mpath));
    } catch (const nlohmann::json::exception& e) {
      throw Error(mpath.string() + ": " + e.what());
    }
    if (fs::exists(case_dir / "files")) copy_tree(case_dir / "files", dest);
    for (const auto& rel : manifest.value("delete", std::vector<std::string>{}))
      fs::remove(inside(dest, rel, mpath));
    std::map<std::string, std::string> links =
        manifest.value("symlinks", std::map<std::string, std::string>{});
    for (const auto& [rel, target] : links) {
      fs::path link = inside(dest, rel, mpath);
      fs::remove(link);
      fs::create_symlink(target, link, ec);
      if (ec) throw Error("symlink(" + quote(link.string()) + "): " + ec.message());
    }
  }

  MaterializedExample out;
  out.wiki = dest;
  std::vector<std::string> untrack = manifest.value("untrack", std::vector<std::string>{});
  for (const auto& rel : untrack)
    inside(dest, rel, case_dir / "case.json");
  out.wiki_commit = commit_all(dest, "main", "K3(rms-norm v002): stub — example wiki", untrack);
  if (!case_dir.empty() && fs::exists(case_dir / "working")) copy_tree(case_dir / "working", dest);

  fs::path home = dest / "raw" / "code" / kHomeRepo;
  copy_tree(examples / "home" / kHomeRepo, home);
  out.home_commit = commit_all(home, kHomeBranch, "normkit: naive rms-norm and its reference");
  return out;
}

}  // namespace kd::dispatcher
