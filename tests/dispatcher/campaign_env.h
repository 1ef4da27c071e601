// Test helpers for campaigns whose provider fails: the example wiki with more queued experiments
// (copies of v002's stub, committed), fake-model scripts written on the fly, and background
// processes (a `kdispatch fake-llm` server to stop and restart, a `kdispatch run` to kill).
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/example_env.h"

namespace kd::test {

// Commits stubs v003.. so that `count` experiments (v002 included) are queued.
void add_queued_experiments(const ExampleEnv& env, int count);

// A script of text-only turns: the author never finishes, so each experiment ends quickly in
// the rules' verdict for a session without a finish (inconclusive). `first_faults` apply to the
// first request of each experiment.
std::string write_script(const std::filesystem::path& path,
                         const nlohmann::json& first_faults = nlohmann::json::array());

// A child process with its stdout and stderr in files.
struct Child {
  pid_t pid = -1;
  std::filesystem::path out, err;
  int wait();  // the wait status
  bool running() const;
  void kill(int sig) const;
};
Child spawn_kdispatch(const std::vector<std::string>& args, const std::filesystem::path& log_base);

// Starts `kdispatch fake-llm` on `listen` (127.0.0.1:0 for any port); returns it and sets `url`
// from its first line.
Child start_fake_llm(const std::string& script, const std::string& listen,
                     const std::filesystem::path& log_base, std::string& url);

// Journal records of `env` for one experiment key, of one type (empty: all).
std::vector<nlohmann::json> records_of(const ExampleEnv& env, const std::string& key,
                                       const std::string& type = "");

}  // namespace kd::test
