// Input hygiene and exit statuses (docs/architecture.md): no input crashes a command; bad
// values are usage errors (64) naming the option; a user's missing path or malformed file is a
// refusal (2) naming it, never "internal error" (70); --help and --version on every command.
#include <gtest/gtest.h>

#include <string>

#include "common/files.h"
#include "tests/support/example_env.h"
#include "tests/support/process.h"

namespace kd {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> run_args(const test::ExampleEnv& env, std::vector<std::string> extra) {
  std::vector<std::string> a = {"run",
                                "--wiki",
                                env.wiki.string(),
                                "--provider",
                                "fake",
                                "--script",
                                test::ExampleEnv::script("honest-author.json"),
                                "--chips",
                                env.chips.string(),
                                "--run-root",
                                env.runs.string()};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

TEST(Hygiene, BadValuesAreUsageErrorsNamingTheOption) {
  test::ExampleEnv env;
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--max-turns", "-5"}, "--max-turns"},
      {{"--max-turns", "0"}, "--max-turns"},
      {{"--max-turns", "3abc"}, "--max-turns"},
      {{"--max-cost", "-1"}, "--max-cost"},
      {{"--max-cost", "nan"}, "--max-cost"},
      {{"--max-cost", "inf"}, "--max-cost"},
      {{"--status-every", "0"}, "--status-every"},
      {{"--parallel", "-1"}, "--parallel"},
      {{"--max-campaign-cost", "nan"}, "--max-campaign-cost"},
      {{"--outage-wait", "-3"}, "--outage-wait"},
  };
  for (const auto& [extra, option] : cases) {
    auto r = test::run_kdispatch(run_args(env, extra));
    EXPECT_EQ(r.exit_code, 64) << extra[0] << " " << extra[1] << ": " << r.err;
    EXPECT_NE(r.err.find(option), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(env.runs)) << extra[0] << " " << extra[1];
  }
}

TEST(Hygiene, AVeryLongFamilyIsRefusedNotACrash) {
  test::ExampleEnv env;
  const std::string family(50'000, 'a');
  const std::vector<std::vector<std::string>> commands = {
      {"brief", "--wiki", env.wiki.string(), "--family", family, "--experiment", "v002"},
      {"author", "--wiki", env.wiki.string(), "--family", family, "--experiment", "v002",
       "--provider", "fake", "--script", test::ExampleEnv::script("honest-author.json")},
      {"audit", env.root.string(), "--wiki", env.wiki.string(), "--family", family, "--experiment",
       "v002"},
      run_args(env, {"--family", family}),
  };
  for (const auto& args : commands) {
    auto r = test::run_kdispatch(args);
    EXPECT_EQ(r.signal, 0) << args[0];
    EXPECT_EQ(r.exit_code, 64) << args[0] << ": " << r.err.substr(0, 300);
    EXPECT_NE(r.err.find("--family must be a slug"), std::string::npos) << args[0];
    EXPECT_LT(r.err.size(), 2000u) << args[0] << " echoes the whole value";
  }
}

TEST(Hygiene, AnUncreatableRunRootIsRefusedNotACrash) {
  test::ExampleEnv env;
  write_file_atomic(env.root / "plain-file", "x\n");
  auto r = test::run_kdispatch(
      {"run", "--wiki", env.wiki.string(), "--provider", "fake", "--script",
       test::ExampleEnv::script("honest-author.json"), "--chips", env.chips.string(), "--run-root",
       (env.root / "plain-file/runs").string(), "--tool-dir", env.tools.string()});
  EXPECT_EQ(r.signal, 0);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("plain-file"), std::string::npos) << r.err;
}

TEST(Hygiene, MissingAndMalformedUserFilesExit2) {
  test::TempDir dir;
  write_file_atomic(dir / "broken.json", "{\"chips\": [");
  write_file_atomic(dir / "broken.jsonl", "not a transcript\n");
  const std::vector<std::vector<std::string>> cases = {
      {"transcript", "verify", dir / "missing.jsonl"},
      {"receipt", "verify", dir / "missing.json"},
      {"receipt", "verify", dir / "broken.json"},
      {"audit", dir / "missing"},
      {"status", "--run-root", dir / "missing"},
      {"verify", "--run", dir / "missing", "--chips", dir / "broken.json"},
      {"brief", "--wiki", dir / "missing", "--family", "rms-norm", "--experiment", "v002",
       "--chips", dir / "broken.json"},
  };
  for (const auto& args : cases) {
    auto r = test::run_kdispatch(args);
    EXPECT_EQ(r.exit_code, 2) << args[0] << " " << args[1] << ": " << r.out << r.err;
    EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
  }
}

TEST(Hygiene, HelpAndVersionOnEveryCommand) {
  for (const char* command : {"brief", "sandbox", "author", "verify", "run", "status", "receipt",
                              "transcript", "audit", "fake-llm", "demo"}) {
    auto h = test::run_kdispatch({command, "--help"});
    EXPECT_EQ(h.exit_code, 0) << command << h.err;
    EXPECT_NE(h.out.find(std::string("usage: kdispatch ") + command), std::string::npos)
        << command << ": " << h.out;
    auto v = test::run_kdispatch({command, "--version"});
    EXPECT_EQ(v.exit_code, 0) << command << v.err;
    EXPECT_EQ(v.out.rfind("kdispatch ", 0), 0u) << command << ": " << v.out;
  }
  auto v = test::run_kdispatch({"--version"});
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_EQ(v.out.rfind("kdispatch ", 0), 0u) << v.out;
}

}  // namespace
}  // namespace kd
