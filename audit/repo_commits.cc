#include "audit/repo_commits.h"

#include <git2.h>

#include "common/errors.h"

namespace kd::audit {

namespace {
std::string git_failure(const std::string& call, const std::string& object) {
  const ::git_error* e = git_error_last();
  return call + "(" + object + "): " + (e && e->message ? e->message : "unknown libgit2 error");
}
}  // namespace

struct RepoCommits::Impl {
  git_repository* repo = nullptr;
  git_oid tip{};
};

RepoCommits::RepoCommits(const std::string& repository, const std::string& branch)
    : impl_(new Impl) {
  git_libgit2_init();
  if (git_repository_open(&impl_->repo, repository.c_str()) != 0) {
    std::string msg = git_failure("git_repository_open", repository);
    delete impl_;
    git_libgit2_shutdown();
    throw Error(msg);
  }
  std::string rev = branch.empty() ? "HEAD" : branch;
  git_object* obj = nullptr;
  if (git_revparse_single(&obj, impl_->repo, rev.c_str()) != 0) {
    std::string msg = git_failure("git_revparse_single", repository + " " + rev);
    git_repository_free(impl_->repo);
    delete impl_;
    git_libgit2_shutdown();
    throw Error(msg);
  }
  git_object* commit = nullptr;
  git_object_peel(&commit, obj, GIT_OBJECT_COMMIT);
  git_oid_cpy(&impl_->tip, git_object_id(commit ? commit : obj));
  git_object_free(commit);
  git_object_free(obj);
}

RepoCommits::~RepoCommits() {
  git_repository_free(impl_->repo);
  delete impl_;
  git_libgit2_shutdown();
}

RepoCommit RepoCommits::lookup(const std::string& sha) const {
  RepoCommit out;
  if (sha.size() < 4 || sha.size() > GIT_OID_HEXSZ ||
      sha.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
    return out;
  git_oid oid;
  if (git_oid_fromstrn(&oid, sha.c_str(), sha.size()) != 0) return out;
  git_commit* commit = nullptr;
  if (git_commit_lookup_prefix(&commit, impl_->repo, &oid, sha.size()) != 0) return out;
  out.found = true;
  const char* summary = git_commit_summary(commit);
  out.subject = summary ? summary : "";
  const git_oid* id = git_commit_id(commit);
  out.on_branch =
      git_oid_equal(id, &impl_->tip) || git_graph_descendant_of(impl_->repo, &impl_->tip, id) == 1;
  git_commit_free(commit);
  return out;
}

}  // namespace kd::audit
