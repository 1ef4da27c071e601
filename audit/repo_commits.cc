#include "audit/repo_commits.h"

#include "common/errors.h"
#include "git/reader.h"

namespace kd::audit {

struct RepoCommits::Impl {
  git::Reader reader;
  std::string tip;
  explicit Impl(const std::string& repository) : reader(repository) {}
};

RepoCommits::RepoCommits(const std::string& repository, const std::string& branch) {
  try {
    impl_ = std::make_unique<Impl>(repository);
    impl_->tip = impl_->reader.resolve(branch.empty() ? "HEAD" : branch);
  } catch (const Error& e) {
    throw Error("git(" + quote(repository) + " at " + (branch.empty() ? "HEAD" : branch) +
                "): " + e.what());
  }
}

RepoCommits::~RepoCommits() = default;

RepoCommit RepoCommits::lookup(const std::string& sha) const {
  RepoCommit out;
  std::optional<std::string> id = impl_->reader.commit_by_prefix(sha);
  if (!id) return out;
  out.found = true;
  const std::string message = impl_->reader.commit(*id).message;
  // git's summary: the first paragraph's lines joined by spaces.
  std::string summary;
  size_t pos = message.find_first_not_of('\n');
  while (pos != std::string::npos && pos < message.size()) {
    size_t end = message.find('\n', pos);
    std::string line = message.substr(pos, end == std::string::npos ? end : end - pos);
    if (line.find_first_not_of(" \t") == std::string::npos) break;
    summary += (summary.empty() ? "" : " ") + line;
    pos = end == std::string::npos ? end : end + 1;
  }
  out.subject = summary;
  out.on_branch = impl_->reader.is_ancestor(*id, impl_->tip);
  return out;
}

}  // namespace kd::audit
