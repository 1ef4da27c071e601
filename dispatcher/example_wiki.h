// The shipped example (examples/): a small wiki with one CPU kernel family and its home
// repository, materialized as real git repositories for the demo, the tests and benchmarks.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace kd::dispatcher {

inline constexpr const char* kExampleFamily = "rms-norm";
inline constexpr const char* kExampleExperiment = "v002";

// Commits every non-ignored file under `dir` on `branch`, creating the repository (with
// `branch` as its initial branch) when `dir` has none. Author, committer and time are fixed, so
// the same content gives the same commit ids. Paths in `leave_out` stay on disk but out of the
// commit (untracked). Returns the commit id.
std::string commit_all(const std::filesystem::path& dir, const std::string& branch,
                       const std::string& message, const std::vector<std::string>& leave_out = {});

// A refusal case under examples/refusal-cases/<name>/: case.json holds the checklist item the
// refusal names and a substring of its reason.
struct RefusalCase {
  std::string name;
  std::string item;
  std::string reason;
};
std::vector<RefusalCase> example_refusal_cases();

struct ExampleOptions {
  std::optional<std::string> refusal_case;  // apply this case's overlay
};

struct MaterializedExample {
  std::filesystem::path wiki;  // the wiki repository root (== dest)
  std::string wiki_commit;
  std::string home_commit;
};

// Copies examples/wiki into `dest` (absent or empty) as a git repository and creates
// raw/code/normkit from examples/home/normkit on the binding's integration branch. A refusal
// case's overlay is applied around the wiki commit: files/ and case.json's "delete" and
// "symlinks" before it, "untrack" (left out of it) and working/ after it. Throws kd::Error naming
// what failed.
MaterializedExample materialize_example(const std::filesystem::path& dest,
                                        const ExampleOptions& options = {});

}  // namespace kd::dispatcher
