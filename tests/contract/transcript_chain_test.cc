#include "contract/transcript_chain.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "common/files.h"
#include "tests/support/process.h"

namespace kd::contract {
namespace {

std::vector<std::string> make_lines() {
  std::vector<std::string> types = {"header",    "request",     "response",
                                    "tool_call", "tool_result", "end"};
  std::vector<std::string> lines;
  std::string prev(kZeroHash);
  for (size_t i = 0; i < types.size(); ++i) {
    ChainRecord r{i,
                  prev,
                  "2026-12-02T12:00:0" + std::to_string(i) + "Z",
                  "s1",
                  "author",
                  types[i],
                  "{\"n\":" + std::to_string(i) + ",\"text\":\"type\\\":\\\"x\"}"};
    lines.push_back(seal_chain_line(r, &prev));
  }
  return lines;
}

std::string join(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines)
    out += l + "\n";
  return out;
}

ChainReport verify_text(const std::string& text) {
  test::TempDir dir;
  write_file_atomic(dir / "t.jsonl", text);
  return verify_chain_file(dir / "t.jsonl");
}

TEST(TranscriptChain, IntactChainVerifiesAndReportsHead) {
  auto lines = make_lines();
  ChainReport r = verify_text(join(lines));
  EXPECT_TRUE(r.ok) << r.reason;
  EXPECT_EQ(r.lines, lines.size());
  std::string last = lines.back();
  EXPECT_EQ(r.head, last.substr(last.size() - 66, 64));
}

TEST(TranscriptChain, EverySingleByteEditIsCaught) {
  std::string text = join(make_lines());
  for (size_t i = 0; i < text.size(); ++i) {
    std::string edited = text;
    edited[i] = text[i] == 'a' ? 'b' : 'a';
    ChainReport r = verify_text(edited);
    ASSERT_FALSE(r.ok) << "edit at byte " << i << " was not detected";
    EXPECT_GT(r.broken_line, 0u);
  }
}

TEST(TranscriptChain, DeletedAddedAndReorderedLinesAreNamed) {
  auto lines = make_lines();
  auto deleted = lines;
  deleted.erase(deleted.begin() + 2);
  ChainReport r = verify_text(join(deleted));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.broken_line, 3u);

  auto added = lines;
  added.insert(added.begin() + 3, lines[2]);
  r = verify_text(join(added));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.broken_line, 4u);

  auto swapped = lines;
  std::swap(swapped[1], swapped[2]);
  r = verify_text(join(swapped));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.broken_line, 2u);
}

TEST(TranscriptChain, TruncationAnywhereIsCaught) {
  std::string text = join(make_lines());
  for (size_t cut = 0; cut < text.size(); ++cut) {
    ChainReport r = verify_text(text.substr(0, cut));
    ASSERT_FALSE(r.ok) << "truncation at byte " << cut << " was not detected";
  }
}

TEST(TranscriptChain, SessionWithoutEndIsReported) {
  auto lines = make_lines();
  lines.pop_back();
  ChainReport r = verify_text(join(lines));
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.reason.find("not an end record"), std::string::npos) << r.reason;
}

TEST(TranscriptChain, MultiMegabyteLinesStream) {
  std::string prev(kZeroHash);
  std::string big(5 << 20, 'z');
  std::vector<std::string> lines;
  lines.push_back(seal_chain_line({0, prev, "t", "s", "author", "header", "{}"}, &prev));
  lines.push_back(seal_chain_line(
      {1, prev, "t", "s", "author", "tool_result", "{\"out\":\"" + big + "\"}"}, &prev));
  lines.push_back(seal_chain_line({2, prev, "t", "s", "author", "end", "{}"}, &prev));
  ChainReport r = verify_text(join(lines));
  EXPECT_TRUE(r.ok) << r.reason;
  EXPECT_EQ(r.head, prev);
}

}  // namespace
}  // namespace kd::contract
