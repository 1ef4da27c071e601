#include "dispatcher/journal.h"

#include <gtest/gtest.h>

#include "common/errors.h"
#include "common/files.h"
#include "tests/support/process.h"

namespace kd::dispatcher {
namespace {

TEST(Journal, AppendsReplaysAndDropsATornTail) {
  test::TempDir dir;
  auto path = std::filesystem::path(dir.path()) / "c/journal.jsonl";
  {
    Journal j(path);
    j.append("dispatched", "fam/v001", {{"branch", "kernel/fam-v001"}});
    j.append("committed", "fam/v001", {{"sha", "abc"}});
  }
  // A crash in the middle of the third append.
  std::string text = read_file(path);
  write_file_atomic(path, text + "{\"seq\":2,\"type\":\"fini");
  Journal j(path);
  EXPECT_EQ(j.torn_lines(), 1u);
  ASSERT_EQ(j.records().size(), 2u);
  EXPECT_EQ(j.records()[1].type, "committed");
  EXPECT_EQ(j.records()[1].data["sha"], "abc");
  j.append("finished", "fam/v001", nlohmann::json::object());
  Journal again(path);
  EXPECT_EQ(again.torn_lines(), 0u);
  ASSERT_EQ(again.records().size(), 3u);
  EXPECT_EQ(again.records()[2].seq, 2u);
}

TEST(Journal, CorruptMiddleLineIsAnErrorNamingIt) {
  test::TempDir dir;
  auto path = std::filesystem::path(dir.path()) / "journal.jsonl";
  write_file_atomic(path,
                    "{\"seq\":0,\"type\":\"dispatched\"}\nnot json\n{\"seq\":2,\"type\":\"x\"}\n");
  try {
    Journal j(path);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("line 2"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kd::dispatcher
