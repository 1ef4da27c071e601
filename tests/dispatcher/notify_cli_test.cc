// What `kdispatch run` leaves for people at its end: its process record, the regenerated HTML
// report, and the --notify-cmd events (argv, no shell, one JSON event on stdin each).
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "common/files.h"
#include "tests/support/example_env.h"

namespace kd {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

TEST(RunNotify, EachOutcomeAndTheEndReachTheCommandAndTheReportIsWritten) {
  test::ExampleEnv env;
  const fs::path events = env.root / "events.jsonl";
  // `tee -a FILE`: appends its stdin to FILE. A quoted word stays one argument.
  auto r = env.run(test::ExampleEnv::script("honest-author.json"),
                   {"--notify-cmd", "tee -a '" + events.string() + "'"});
  ASSERT_EQ(r.exit_code, env.run_exit_for_verdict()) << r.out << r.err;
  std::vector<json> got;
  std::istringstream in(read_file(events));
  for (std::string line; std::getline(in, line);)
    got.push_back(json::parse(line));
  ASSERT_EQ(got.size(), 2u) << read_file(events);
  EXPECT_EQ(got[0]["event"], "verdict");
  EXPECT_EQ(got[0]["experiment"], "rms-norm/v002");
  EXPECT_EQ(got[0]["outcome"], env.outcome()["verdict"]);
  EXPECT_EQ(got[1]["event"], "campaign_end");
  EXPECT_EQ(got[1]["experiments"], 1);
  const std::string index = got[1]["report"];
  EXPECT_EQ(index, (env.runs / "report/index.html").string());
  EXPECT_TRUE(fs::is_regular_file(index));
  EXPECT_NE(read_file(index).find("rms-norm"), std::string::npos);

  // The campaign's record of itself, which the report shows: how it was asked for, and its end.
  json info = json::parse(read_file(env.runs / "campaign-process.json"));
  EXPECT_EQ(info["model"]["provider"], "fake");
  EXPECT_TRUE(info["ended"].is_string());
  EXPECT_NE(info["command_line"].dump().find("--notify-cmd"), std::string::npos);
  EXPECT_NE(read_file(index).find("--notify-cmd"), std::string::npos);

  // A command that fails, or is not there, warns and never fails the run; an earlier verdict is
  // not announced again.
  auto again = env.run(test::ExampleEnv::script("honest-author.json"),
                       {"--notify-cmd", "/nonexistent/notify"});
  EXPECT_EQ(again.exit_code, env.run_exit_for_verdict()) << again.err;
  EXPECT_NE(again.err.find("warning: notify command /nonexistent/notify"), std::string::npos)
      << again.err;
  auto bad = env.run(test::ExampleEnv::script("honest-author.json"), {"--notify-cmd", "'open"});
  EXPECT_EQ(bad.exit_code, 64);
  EXPECT_NE(bad.err.find("unterminated quote"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace kd
