// Preflight (`kdispatch run`, `author`, `verify`): every problem that can be known before a
// dispatch is named, all at once, exit 2, and nothing is left behind: no run directory, no
// journal record, no branch, no worktree.
#include <gtest/gtest.h>

#include <map>

#include "common/files.h"
#include "git/repo.h"
#include "tests/support/example_env.h"

namespace kd {
namespace {

namespace fs = std::filesystem;

struct Case {
  const char* name;
  std::map<std::string, std::string> options;  // replaces the default option ("" drops it)
  std::map<std::string, std::string> env;
  const char* names;  // a substring the refusal must hold
};

std::vector<std::string> run_args(const test::ExampleEnv& env,
                                  const std::map<std::string, std::string>& over) {
  std::map<std::string, std::string> o = {
      {"--wiki", env.wiki.string()},
      {"--provider", "fake"},
      {"--script", test::ExampleEnv::script("honest-author.json")},
      {"--chips", env.chips.string()},
      {"--run-root", env.runs.string()},
      {"--tool-dir", env.tools.string()}};
  for (const auto& [k, v] : over)
    o[k] = v;
  std::vector<std::string> args = {"run"};
  for (const auto& [k, v] : o) {
    if (v.empty()) continue;
    args.push_back(k);
    args.push_back(v);
  }
  return args;
}

void expect_nothing_left(const test::ExampleEnv& env, const std::string& what) {
  EXPECT_FALSE(fs::exists(env.runs)) << what << ": a run root was made";
  EXPECT_FALSE(fs::exists(env.worktree())) << what << ": a worktree was made";
  EXPECT_FALSE(git::branch_exists(env.home(), "kernel/rms-norm-v002")) << what;
}

// A copy of the policies with one file replaced.
std::string broken_policies(const test::ExampleEnv& env, const std::string& rel,
                            const std::string& text) {
  fs::path dir = env.root / ("policies-" + std::to_string(std::hash<std::string>()(rel)));
  fs::copy(fs::path(KD_SOURCE_DIR) / "policies", dir, fs::copy_options::recursive);
  write_file_atomic(dir / rel, text);
  return dir.string();
}

TEST(PreflightCli, EachProblemIsNamedBeforeAnythingExists) {
  test::ExampleEnv env;
  write_file_atomic(env.root / "a-file", "not a directory\n");
  const std::vector<Case> cases = {
      {"unknown provider", {{"--provider", "nosuch"}, {"--script", ""}}, {}, "nosuch"},
      {"missing script",
       {{"--script", (env.root / "no-script.json").string()}},
       {},
       "no-script.json"},
      {"missing key",
       {{"--provider", "anthropic"}, {"--script", ""}},
       {{"ANTHROPIC_API_KEY", ""}},
       "ANTHROPIC_API_KEY is not set"},
      {"no price",
       {{"--provider", "openai"},
        {"--script", ""},
        {"--base-url", "http://127.0.0.1:9"},
        {"--model", "no-such-model"}},
       {},
       "no price for model \"no-such-model\""},
      {"missing tool dir", {{"--tool-dir", (env.root / "no-tools").string()}}, {}, "no-tools"},
      {"default TPU inventory", {{"--chips", ""}}, {}, "/dev/accel0 does not exist"},
      {"unknown placeholder", {{"--verify-cmd", "python3 {nonsense}"}}, {}, "{nonsense}"},
      {"verify program missing",
       {{"--verify-cmd", "no-such-verifier {receipt}"}},
       {},
       "no-such-verifier"},
      {"uncreatable run root",
       {{"--run-root", (env.root / "a-file/runs").string()}},
       {},
       "exists and is not a directory"},
      {"unknown family", {{"--family", "no-such-family"}}, {}, "no-such-family"},
  };
  for (const auto& c : cases) {
    auto r = test::run_kdispatch(run_args(env, c.options), "", c.env);
    EXPECT_EQ(r.exit_code, 2) << c.name << "\n" << r.out << r.err;
    EXPECT_NE(r.err.find(c.names), std::string::npos) << c.name << ": " << r.err;
    EXPECT_NE(r.err.find("refused before dispatch"), std::string::npos) << c.name << ": " << r.err;
    expect_nothing_left(env, c.name);
  }
}

TEST(PreflightCli, BrokenPolicyFilesAreNamed) {
  test::ExampleEnv env;
  for (const auto& [rel, names] : std::vector<std::pair<std::string, std::string>>{
           {"providers.json", "providers.json"}, {"sandbox/author.json", "author"}}) {
    auto r = test::run_kdispatch(run_args(env, {}), "",
                                 {{"KDISPATCH_POLICY_DIR", broken_policies(env, rel, "{\"x\": ")}});
    EXPECT_EQ(r.exit_code, 2) << rel << r.out << r.err;
    EXPECT_NE(r.err.find(names), std::string::npos) << rel << ": " << r.err;
    expect_nothing_left(env, rel);
  }
}

TEST(PreflightCli, EveryProblemAtOnce) {
  test::ExampleEnv env;
  auto r = test::run_kdispatch(run_args(env, {{"--tool-dir", (env.root / "no-tools").string()},
                                              {"--verify-cmd", "x {nonsense}"},
                                              {"--chips", ""}}));
  EXPECT_EQ(r.exit_code, 2);
  for (const char* named : {"no-tools", "{nonsense}", "/dev/accel0"})
    EXPECT_NE(r.err.find(named), std::string::npos) << named << ": " << r.err;
  expect_nothing_left(env, "all at once");
}

TEST(PreflightCli, AuthorAndVerifyCheckFirstToo) {
  test::ExampleEnv env;
  auto a = test::run_kdispatch({"author", "--wiki", env.wiki.string(), "--family", "rms-norm",
                                "--experiment", "v002", "--provider", "fake", "--script",
                                (env.root / "none.json").string(), "--chips", env.chips.string(),
                                "--run-root", env.runs.string()});
  EXPECT_EQ(a.exit_code, 2) << a.out << a.err;
  EXPECT_NE(a.err.find("none.json"), std::string::npos) << a.err;
  expect_nothing_left(env, "author");

  // A verify template with an unknown placeholder is refused before the verification, not after.
  auto authored = env.author(test::ExampleEnv::script("honest-author.json"));
  ASSERT_EQ(authored.exit_code, 0) << authored.out << authored.err;
  auto v = env.verify({"--verify-cmd", "python3 {nonsense}"});
  EXPECT_EQ(v.exit_code, 2) << v.out << v.err;
  EXPECT_NE(v.err.find("{nonsense}"), std::string::npos) << v.err;
  EXPECT_FALSE(fs::exists(env.run_dir() / "outcome.json"));
  EXPECT_FALSE(fs::exists(env.run_dir() / "verifier"));
}

TEST(PreflightCli, DryRunPrintsTheQueueAndTouchesNothing) {
  test::ExampleEnv env;
  std::vector<std::string> args = run_args(env, {});
  args.push_back("--dry-run");
  auto r = test::run_kdispatch(args);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("rms-norm/v002"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ok  brief of rms-norm/v002"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("nothing was dispatched"), std::string::npos) << r.out;
  expect_nothing_left(env, "dry run");
}

}  // namespace
}  // namespace kd
