#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "agents/transcript_resume.h"
#include "agents/transcript_writer.h"
#include "common/errors.h"
#include "common/files.h"
#include "common/sha256.h"
#include "contract/transcript_chain.h"
#include "tests/support/process.h"

namespace kd::agents {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    out.push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  return out;
}

std::string join(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines)
    s += l + "\n";
  return s;
}

class TranscriptTest : public testing::Test {
 protected:
  void SetUp() override {
    TranscriptWriter w(dir_, "sess-1", "author", {"hunter2-very-secret"});
    w.append("header", {{"family", "rms"}, {"chip", "0"}});
    w.append("request",
             {{"turn", 1}, {"attempt", 1}, {"body", {{"messages", {"use hunter2-very-secret"}}}}});
    w.append("response", {{"turn", 1}, {"text", "ok"}});
    w.append("tool_result", {{"id", "a"}, {"content", std::string(70 * 1024, 'z')}});
    w.append("end", {{"reason", "finished"}});
    head_ = w.head();
    w.flush();  // appended records reach the file on the disk threads
    text_ = read_file(path());
  }
  fs::path path() const { return dir_ / "transcript.jsonl"; }
  contract::ChainReport check(const std::string& text) {
    fs::path p = tmp_ / "edited.jsonl";
    std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
    return contract::verify_chain_file(p);
  }

  kd::test::TempDir tmp_;
  fs::path dir_ = fs::path(tmp_.path()) / "author";
  std::string head_, text_;
};

TEST_F(TranscriptTest, IntactChainVerifiesAndFollowsTheSchema) {
  contract::ChainReport r = contract::verify_chain_file(path());
  ASSERT_TRUE(r.ok) << r.reason;
  EXPECT_EQ(r.lines, 5u);
  EXPECT_EQ(r.head, head_);
  auto lines = lines_of(text_);
  json h = json::parse(lines[0]);
  EXPECT_EQ(h["seq"], 0);
  EXPECT_EQ(h["prev"], std::string(64, '0'));
  EXPECT_EQ(h["session"], "sess-1");
  EXPECT_EQ(h["role"], "author");
  EXPECT_EQ(h["type"], "header");
  EXPECT_EQ(json::parse(lines[1])["prev"], h["hash"]);
  EXPECT_EQ(lines[0].rfind("{\"seq\":0,\"prev\":", 0), 0u) << "fields in the fixed order";
}

TEST_F(TranscriptTest, SecretsAreRedactedBeforeSealing) {
  EXPECT_EQ(text_.find("hunter2-very-secret"), std::string::npos);
  EXPECT_NE(text_.find("use [REDACTED]"), std::string::npos);
}

TEST_F(TranscriptTest, LargeContentGoesToABlobNamedByItsDigest) {
  json rec = json::parse(lines_of(text_)[3]);
  ASSERT_FALSE(rec["data"].contains("content"));
  std::string digest = rec["data"]["content_ref"];
  EXPECT_EQ(rec["data"]["content_bytes"], 70 * 1024);
  std::string blob = read_file(dir_ / "blobs" / digest);
  EXPECT_EQ(blob, std::string(70 * 1024, 'z'));
  EXPECT_EQ(sha256_hex(blob), digest);
}

TEST_F(TranscriptTest, EverySingleByteEditIsCaught) {
  for (size_t i = 0; i < text_.size(); ++i) {
    std::string edited = text_;
    edited[i] = static_cast<char>(edited[i] ^ 0x01);
    contract::ChainReport r = check(edited);
    ASSERT_FALSE(r.ok) << "edit at byte " << i << " went unnoticed";
  }
}

TEST_F(TranscriptTest, DeletedAddedReorderedLinesAndTruncationAreCaught) {
  auto lines = lines_of(text_);
  for (size_t i = 0; i < lines.size(); ++i) {
    auto d = lines;
    d.erase(d.begin() + static_cast<long>(i));
    EXPECT_FALSE(check(join(d)).ok) << "deleted line " << i;
    auto a = lines;
    a.insert(a.begin() + static_cast<long>(i), lines[i]);
    EXPECT_FALSE(check(join(a)).ok) << "duplicated line " << i;
  }
  auto swapped = lines;
  std::swap(swapped[1], swapped[2]);
  contract::ChainReport r = check(join(swapped));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.broken_line, 2u);
  EXPECT_FALSE(check(text_.substr(0, text_.size() - 1)).ok) << "missing final newline";
  EXPECT_FALSE(check(text_.substr(0, text_.size() / 2)).ok) << "cut mid-line";
  lines.pop_back();
  EXPECT_FALSE(check(join(lines)).ok) << "cut at a line boundary: no end record";
}

TEST_F(TranscriptTest, CliVerifyExitCodes) {
  auto ok = kd::test::run_kdispatch({"transcript", "verify", path().string()});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find(head_), std::string::npos);
  std::string edited = text_;
  edited[lines_of(text_)[0].size() + 20] ^= 0x02;
  fs::path bad = tmp_ / "bad.jsonl";
  std::ofstream(bad, std::ios::binary) << edited;
  auto broken = kd::test::run_kdispatch({"transcript", "verify", bad.string()});
  EXPECT_EQ(broken.exit_code, 2);
  EXPECT_NE(broken.out.find("line 2"), std::string::npos) << broken.out;
}

TEST(TranscriptWriter, RefusesToOverwriteAnExistingTranscript) {
  kd::test::TempDir tmp;
  { TranscriptWriter w(tmp.path(), "s", "author"); }
  EXPECT_THROW(TranscriptWriter(tmp.path(), "s", "author"), Error);
}

TEST(TranscriptWriter, FlushMakesEveryAppendedRecordDurable) {
  kd::test::TempDir tmp;
  TranscriptWriter w(tmp.path(), "s", "author");
  for (int i = 0; i < 50; ++i)
    w.append(i == 0 ? "header" : "note", {{"text", "record " + std::to_string(i)}});
  w.flush();
  std::string text = read_file(w.path());
  EXPECT_EQ(lines_of(text).size(), 50u);
  EXPECT_EQ(json::parse(lines_of(text).back())["hash"], w.head());
}

TEST(TranscriptWriter, ManyWritersAtOnceEachKeepTheirChainInOrder) {
  kd::test::TempDir tmp;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&tmp, t] {
      TranscriptWriter w(tmp / std::to_string(t), "s" + std::to_string(t), "author");
      w.append("header", json::object());
      for (int i = 0; i < 200; ++i)
        w.append("note", {{"text", std::to_string(i)}, {"content", std::string(i * 400, 'x')}});
      w.append("end", {{"reason", "finished"}});
    });
  }
  for (auto& t : threads)
    t.join();
  for (int t = 0; t < 8; ++t) {
    contract::ChainReport r =
        contract::verify_chain_file(tmp / (std::to_string(t) + "/transcript.jsonl"));
    EXPECT_TRUE(r.ok) << t << ": " << r.reason;
    EXPECT_EQ(r.lines, 202u);
  }
}

TEST(TranscriptWriter, ResumeCutsATornLineAndContinuesTheChain) {
  kd::test::TempDir tmp;
  fs::path dir = tmp.path();
  {
    TranscriptWriter w(dir, "s", "author");
    w.append("header", json::object());
    w.append("note", {{"text", "one"}});
  }
  std::string intact = read_file(dir / "transcript.jsonl");
  const std::string torn = "{\"seq\":2,\"prev\":\"ab";  // a write cut short
  std::ofstream(dir / "transcript.jsonl", std::ios::app) << torn;
  ResumeState st = read_resume_state(dir);
  EXPECT_EQ(st.tail.records, 2u);
  EXPECT_EQ(st.tail.bytes, intact.size());
  EXPECT_EQ(st.tail.torn_bytes, torn.size());
  EXPECT_EQ(st.tail.head, json::parse(lines_of(intact).back())["hash"]);
  {
    TranscriptWriter w(dir, "s", "author", st.tail);
    EXPECT_EQ(w.records(), 2u);
    w.append("end", {{"reason", "finished"}});
  }
  contract::ChainReport r = contract::verify_chain_file(dir / "transcript.jsonl");
  ASSERT_TRUE(r.ok) << r.reason;
  EXPECT_EQ(r.lines, 3u);
  EXPECT_EQ(read_file(dir / "transcript.jsonl").substr(0, intact.size()), intact);
}

TEST(TranscriptWriter, ResumeRefusesAFileThatChangedSinceItWasRead) {
  kd::test::TempDir tmp;
  fs::path dir = tmp.path();
  { TranscriptWriter(dir, "s", "author").append("header", json::object()); }
  ResumeState st = read_resume_state(dir);
  std::ofstream(dir / "transcript.jsonl", std::ios::app) << "more";
  try {
    TranscriptWriter w(dir, "s", "author", st.tail);
    FAIL() << "expected kd::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("something wrote to it since"), std::string::npos)
        << e.what();
  }
}

TEST(TranscriptWriter, ResumeOfNothingStartsEmpty) {
  kd::test::TempDir tmp;
  ResumeState st = read_resume_state(tmp.path());
  EXPECT_EQ(st.tail.records, 0u);
  EXPECT_EQ(st.tail.head, std::string(64, '0'));
  EXPECT_TRUE(st.messages.empty());
  EXPECT_FALSE(st.end);
}

}  // namespace
}  // namespace kd::agents
