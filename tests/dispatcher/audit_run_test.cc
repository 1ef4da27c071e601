// `kdispatch audit` on what `kdispatch run` left: a run directory or a whole run root, with the
// wiki context found from run.json, and a transcript cut and resealed caught by comparing its
// head with the heads the journal, run.json and outcome.json recorded.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/files.h"
#include "contract/transcript_chain.h"
#include "tests/support/example_env.h"

namespace kd {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// Keeps the first `keep` lines of the transcript and seals a well-formed end record after them.
void cut_and_reseal(const fs::path& transcript, size_t keep) {
  std::string text = read_file(transcript);
  std::string kept;
  size_t pos = 0;
  for (size_t i = 0; i < keep; ++i) {
    size_t nl = text.find('\n', pos);
    kept += text.substr(pos, nl + 1 - pos);
    pos = nl + 1;
  }
  std::string last = kept.substr(0, kept.size() - 1);
  last = last.substr(last.rfind('\n') == std::string::npos ? 0 : last.rfind('\n') + 1);
  json l = json::parse(last);
  contract::ChainRecord end{l["seq"].get<std::uint64_t>() + 1,
                            l["hash"],
                            l["ts"],
                            l["session"],
                            l["role"],
                            "end",
                            json{{"reason", "finished"},
                                 {"finish", nullptr},
                                 {"turns", 1},
                                 {"input_tokens", 1},
                                 {"output_tokens", 1},
                                 {"cost_usd", 0}}
                                .dump()};
  std::string hash;
  kept += contract::seal_chain_line(end, &hash) + "\n";
  write_file_atomic(transcript, kept);
}

TEST(AuditRun, FollowsTheRunAndCatchesAResealedTranscript) {
  test::ExampleEnv env;
  auto r = env.run(test::ExampleEnv::script("honest-author.json"));
  ASSERT_TRUE(fs::exists(env.run_dir() / "outcome.json")) << r.out << r.err;

  // The run directory alone: the wiki context comes from run.json, so the honest run is clean
  // of violations and fabrications.
  auto honest = test::run_kdispatch({"audit", env.run_dir().string()});
  EXPECT_LE(honest.exit_code, 1) << honest.out << honest.err;
  EXPECT_EQ(honest.out.find("FABRICATION"), std::string::npos) << honest.out;
  // The run root: every experiment, one summary (never "holds no transcript").
  auto root = test::run_kdispatch({"audit", env.runs.string()});
  EXPECT_LE(root.exit_code, 1) << root.out << root.err;

  const fs::path transcript = env.run_dir() / "author/transcript.jsonl";
  cut_and_reseal(transcript, 20);
  auto chain = test::run_kdispatch({"transcript", "verify", transcript.string()});
  EXPECT_EQ(chain.exit_code, 0) << "the chain alone cannot tell: " << chain.out << chain.err;
  auto caught = test::run_kdispatch({"audit", env.run_dir().string()});
  EXPECT_EQ(caught.exit_code, 2) << caught.out << caught.err;
  for (const char* where : {"run.json", "outcome.json", "the campaign journal"})
    EXPECT_NE(caught.out.find(where), std::string::npos) << where << ": " << caught.out;
  EXPECT_NE(caught.out.find("cut or replaced"), std::string::npos) << caught.out;
  auto caught_root = test::run_kdispatch({"audit", env.runs.string()});
  EXPECT_EQ(caught_root.exit_code, 2) << caught_root.out;
}

}  // namespace
}  // namespace kd
