// `kdispatch brief` and `kdispatch demo` as a user runs them.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "briefs/brief.h"
#include "common/files.h"
#include "common/sha256.h"
#include "examples/example_wiki.h"
#include "tests/support/process.h"

namespace fs = std::filesystem;

namespace kd::briefs {
namespace {

std::vector<std::string> brief_args(const std::string& wiki) {
  return {"brief", "--wiki", wiki, "--family", "rms-norm", "--experiment", "v002"};
}

TEST(BriefCli, PrintsTheMarkdownBriefAndItsJsonForm) {
  test::TempDir tmp;
  auto ex = examples::materialize_example(tmp / "wiki");
  auto r = test::run_kdispatch(brief_args(ex.wiki));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  BriefOutcome lib = build_brief({ex.wiki, "rms-norm", "v002", {}, {}});
  ASSERT_TRUE(lib.brief);
  EXPECT_EQ(r.out, lib.brief->markdown());

  auto args = brief_args(ex.wiki);
  args.push_back("--json");
  auto j1 = test::run_kdispatch(args);
  auto j2 = test::run_kdispatch(args);
  ASSERT_EQ(j1.exit_code, 0) << j1.err;
  EXPECT_EQ(j1.out, j2.out);
  auto j = nlohmann::json::parse(j1.out);
  ASSERT_EQ(j["items"].size(), 10u);
  EXPECT_EQ(j["items"][0]["item"], "reference module");
  EXPECT_EQ(j["items"][9]["item"], "candidate plan");
  auto parts = j["items"][7]["parts"];
  ASSERT_EQ(parts.size(), 18u);
  EXPECT_EQ(parts[0]["source"], "wiki/kernel-optimization-index.md");
  EXPECT_EQ(parts[0]["section"], "The core thesis");
  EXPECT_EQ(parts[0]["sha256"], sha256_hex(parts[0]["content"].get<std::string>()));

  args = brief_args(ex.wiki);
  args.insert(args.end(), {"--out", tmp / "brief.md"});
  auto o = test::run_kdispatch(args);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, "");
  EXPECT_EQ(read_file(tmp / "brief.md"), lib.brief->markdown());
}

TEST(BriefCli, RefusalExitsTwoNamingEveryProblem) {
  test::TempDir tmp;
  auto ex = examples::materialize_example(tmp / "wiki", {"missing-debugging-section"});
  auto r = test::run_kdispatch(brief_args(ex.wiki));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out,
            "refused: 1 problem\n- required reading: wiki/concepts/pallas-kernel.md has no section "
            "\"Debugging\"\n");
  auto args = brief_args(ex.wiki);
  args.push_back("--json");
  auto j = test::run_kdispatch(args);
  EXPECT_EQ(j.exit_code, 2);
  auto doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["refused"], true);
  EXPECT_EQ(doc["problems"][0]["item"], "required reading");
}

TEST(BriefCli, ChipsOptionChoosesTheInventory) {
  test::TempDir tmp;
  auto ex = examples::materialize_example(tmp / "wiki");
  write_file_atomic(tmp / "chips.json",
                    R"({"chips": [{"id": "7", "kind": "cpu", "lock": "/tmp/x-7.lock"}]})");
  auto args = brief_args(ex.wiki);
  args.insert(args.end(), {"--chips", tmp / "chips.json"});
  auto r = test::run_kdispatch(args);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("chip + lock: chip \"0\" is not in the inventory chips.json (valid: 7)"),
            std::string::npos)
      << r.out;
}

TEST(BriefCli, BadCommandLinesAreUsageErrors) {
  EXPECT_EQ(test::run_kdispatch({"brief", "--wiki", "w", "--family", "rms-norm"}).exit_code, 64);
  auto r =
      test::run_kdispatch({"brief", "--wiki", "w", "--family", "rms-norm", "--experiment", "2"});
  EXPECT_EQ(r.exit_code, 64);
  EXPECT_NE(r.err.find("--experiment must look like v001"), std::string::npos);
  EXPECT_EQ(
      test::run_kdispatch({"brief", "--wiki", "w", "--family", "../x", "--experiment", "v001"})
          .exit_code,
      64);
}

}  // namespace
}  // namespace kd::briefs
