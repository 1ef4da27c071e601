// The shipped example (examples/): a small wiki with one CPU kernel family and its home
// repository, materialized as real git repositories for the demo, the tests and benchmarks.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace kd::examples {

inline constexpr const char* kExampleFamily = "rms-norm";
inline constexpr const char* kExampleExperiment = "v002";

// The example's commits carry this fixed time, so the same content gives the same commit ids.
inline constexpr std::int64_t kExampleTime = 1795996800;  // 2026-11-30T00:00:00Z

// git::commit_directory at kExampleTime: commits everything under `dir` on `branch`, making
// the repository when there is none; `leave_out` stays on disk, untracked.
std::string commit_example(const std::filesystem::path& dir, const std::string& branch,
                           const std::string& message,
                           const std::vector<std::string>& leave_out = {});

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

// Adds `families` copies of the example family to a materialized example wiki, fam0..fam<F-1>,
// fam<i> bound to chip i, each with `experiments` in_progress stubs v001..v<E>, and commits them:
// a campaign of many families (the dispatcher's benchmark, the Slurm tests).
void add_example_families(const std::filesystem::path& wiki, int families, int experiments);

}  // namespace kd::examples
