#include "tests/dispatcher/campaign_env.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <thread>

#include "common/files.h"
#include "examples/example_wiki.h"

extern char** environ;

namespace kd::test {

namespace fs = std::filesystem;
using json = nlohmann::json;

void add_queued_experiments(const ExampleEnv& env, int count) {
  const fs::path dir = env.wiki / "wiki/kernel_experiments/rms-norm/pallas";
  const std::string stub = read_file(dir / "2026-11-30-v002-rms-norm.md");
  for (int n = 3; n < 2 + count; ++n) {
    char name[16];
    std::snprintf(name, sizeof name, "v%03d", n);
    std::string text = stub;
    for (size_t p = text.find("v002"); p != std::string::npos; p = text.find("v002", p + 4))
      text.replace(p, 4, name);
    write_file_atomic(dir / ("2026-11-30-" + std::string(name) + "-rms-norm.md"), text);
  }
  examples::commit_example(env.wiki, "main", "K3(rms-norm v003): more stubs", {"raw/code/normkit"});
}

std::string write_script(const fs::path& path, const json& first_faults) {
  json turns = json::array();
  for (int i = 0; i < 4; ++i) {
    json t = {{"text", "Thinking about the kernel, step " + std::to_string(i) + "."}};
    if (i == 0 && !first_faults.empty()) t["faults"] = first_faults;
    turns.push_back(t);
  }
  write_file_atomic(path, json{{"model", "fake-author"}, {"turns", turns}}.dump(2));
  return path.string();
}

int Child::wait() {
  int status = 0;
  ::waitpid(pid, &status, 0);
  pid = -1;
  return status;
}

bool Child::running() const {
  return pid > 0 && ::waitpid(pid, nullptr, WNOHANG) == 0;
}

void Child::kill(int sig) const {
  if (pid > 0) ::kill(pid, sig);
}

Child spawn_kdispatch(const std::vector<std::string>& args, const fs::path& log_base) {
  Child c;
  c.out = log_base.string() + ".out";
  c.err = log_base.string() + ".err";
  std::vector<std::string> argv = {KD_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargv;
  for (auto& a : argv)
    cargv.push_back(a.data());
  cargv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, c.out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, c.err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  int rc = posix_spawn(&c.pid, KD_BINARY, &fa, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw std::runtime_error("posix_spawn kdispatch failed");
  return c;
}

Child start_fake_llm(const std::string& script, const std::string& listen, const fs::path& log_base,
                     std::string& url) {
  Child c = spawn_kdispatch({"fake-llm", "--script", script, "--listen", listen}, log_base);
  for (int i = 0; i < 400; ++i) {
    std::string out = fs::exists(c.out) ? read_file(c.out) : "";
    if (size_t nl = out.find('\n'); nl != std::string::npos) {
      url = out.substr(std::string("listening ").size(), nl - std::string("listening ").size());
      return c;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  throw std::runtime_error("fake-llm did not start: " + read_file(c.err));
}

std::vector<json> records_of(const ExampleEnv& env, const std::string& key,
                             const std::string& type) {
  std::vector<json> out;
  if (!fs::exists(env.journal())) return out;
  std::string text = read_file(env.journal());
  for (size_t pos = 0; pos < text.size();) {
    size_t nl = text.find('\n', pos);
    json j = json::parse(text.substr(pos, nl - pos));
    if (j["experiment"] == key && (type.empty() || j["type"] == type)) out.push_back(j);
    pos = nl + 1;
  }
  return out;
}

}  // namespace kd::test
