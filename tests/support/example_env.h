// The shipped example as a test environment: the wiki and its home repository as real git
// repositories in a temporary directory, two CPU chips with their own lock files, and helpers to
// run kdispatch on them with the fake model.
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/files.h"
#include "examples/example_wiki.h"
#include "tests/support/process.h"

namespace kd::test {

struct ExampleEnv {
  TempDir dir;
  std::filesystem::path root, wiki, chips, runs, tools;

  ExampleEnv() : root(dir.path()) {
    // As root the boxes run as an unprivileged user, who must reach the wiki through this root.
    std::filesystem::permissions(
        root, std::filesystem::perms::owner_all | std::filesystem::perms::group_read |
                  std::filesystem::perms::group_exec | std::filesystem::perms::others_read |
                  std::filesystem::perms::others_exec);
    wiki = root / "wiki";
    examples::materialize_example(wiki);
    chips = root / "chips.json";
    write_file_atomic(
        chips, nlohmann::json{{"chips",
                               {{{"id", "0"}, {"kind", "cpu"}, {"lock", root / "chip0.lock"}},
                                {{"id", "1"}, {"kind", "cpu"}, {"lock", root / "chip1.lock"}}}}}
                   .dump());
    runs = root / "runs";
    tools = std::filesystem::path(KD_SOURCE_DIR) / "examples/tools";
  }

  static std::string script(const std::string& name) {
    return std::string(KD_SOURCE_DIR) + "/examples/scripts/" + name;
  }
  std::filesystem::path run_dir() const { return runs / "example/rms-norm-v002"; }
  std::filesystem::path journal() const { return runs / "example/journal.jsonl"; }
  std::filesystem::path home() const { return wiki / "raw/code/normkit"; }
  std::filesystem::path worktree() const {
    return wiki / "wiki/kernel_experiments/rms-norm/pallas/.repo";
  }

  ProcessResult author(const std::string& script_path) const {
    return run_kdispatch({"author", "--wiki", wiki.string(), "--family", "rms-norm", "--experiment",
                          "v002", "--provider", "fake", "--script", script_path, "--chips",
                          chips.string(), "--run-root", runs.string(), "--tool-dir",
                          tools.string()});
  }
  ProcessResult verify(std::vector<std::string> extra = {}) const {
    std::vector<std::string> args = {"verify", "--run", run_dir().string(), "--tool-dir",
                                     tools.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_kdispatch(args);
  }
  ProcessResult run(const std::string& script_path, std::vector<std::string> extra = {},
                    const std::map<std::string, std::string>& env = {}) const {
    std::vector<std::string> args = {"run",          "--wiki",     wiki.string(), "--provider",
                                     "fake",         "--script",   script_path,   "--chips",
                                     chips.string(), "--run-root", runs.string(), "--tool-dir",
                                     tools.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_kdispatch(args, "", env);
  }
  nlohmann::json outcome() const {
    return nlohmann::json::parse(read_file(run_dir() / "outcome.json"));
  }
  // What `kdispatch run` exits with for the example's verdict: 0 for one the receipt carries
  // (supported, refuted), 2 otherwise (on a busy machine the timing gate may make it
  // inconclusive).
  int run_exit_for_verdict() const {
    const std::string v = outcome()["verdict"];
    return v == "supported" || v == "refuted" ? 0 : 2;
  }
  // Journal records of one type; none while there is no journal yet.
  std::vector<nlohmann::json> records_or_empty(const std::string& type) const {
    return std::filesystem::exists(journal()) ? records(type) : std::vector<nlohmann::json>{};
  }
  // Journal records of one type.
  std::vector<nlohmann::json> records(const std::string& type) const {
    std::vector<nlohmann::json> out;
    std::string text = read_file(journal());
    size_t pos = 0;
    while (pos < text.size()) {
      size_t nl = text.find('\n', pos);
      auto j = nlohmann::json::parse(text.substr(pos, nl - pos));
      if (j["type"] == type) out.push_back(j);
      pos = nl + 1;
    }
    return out;
  }
};

}  // namespace kd::test
