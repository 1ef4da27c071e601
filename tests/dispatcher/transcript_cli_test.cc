// `kdispatch transcript verify` as a user runs it: a real process on real files.
#include <gtest/gtest.h>

#include "common/files.h"
#include "contract/transcript_chain.h"
#include "tests/support/process.h"

namespace kd {
namespace {

std::string transcript() {
  std::string prev(contract::kZeroHash), text;
  const char* types[] = {"header", "note", "end"};
  for (std::uint64_t i = 0; i < 3; ++i) {
    text += contract::seal_chain_line(
                {i, prev, "2026-12-02T00:00:00Z", "s", "author", types[i], "{}"}, &prev) +
            "\n";
  }
  return text;
}

TEST(TranscriptCli, IntactExitsZeroEditedExitsTwoNamingTheLine) {
  test::TempDir dir;
  write_file_atomic(dir / "t.jsonl", transcript());
  auto ok = test::run_kdispatch({"transcript", "verify", dir / "t.jsonl"});
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  EXPECT_NE(ok.out.find("3 records"), std::string::npos) << ok.out;

  std::string edited = transcript();
  edited[edited.find("note")] = 'N';
  write_file_atomic(dir / "t.jsonl", edited);
  auto bad = test::run_kdispatch({"transcript", "verify", dir / "t.jsonl"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.out.find("line 2"), std::string::npos) << bad.out;
}

TEST(TranscriptCli, UsageErrorsExit64) {
  EXPECT_EQ(test::run_kdispatch({"transcript"}).exit_code, 64);
  EXPECT_EQ(test::run_kdispatch({"no-such-command"}).exit_code, 64);
}

}  // namespace
}  // namespace kd
