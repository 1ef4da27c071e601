// The importers: shared sample transcripts import without loss, long lines and .zst stream,
// unknown records are counted, torn last lines are reported.
#include <gtest/gtest.h>
#include <zstd.h>

#include <filesystem>
#include <fstream>

#include "audit/auditor.h"
#include "audit/importer.h"
#include "audit/line_reader.h"
#include "common/errors.h"
#include "common/files.h"
#include "tests/support/fixtures.h"

namespace kd::audit {
namespace {

namespace fs = std::filesystem;

fs::path samples() {
  return fs::path(KD_SOURCE_DIR) / ".." / "shared" / "fixtures" / "transcripts";
}

struct Imported {
  FileStats stats;
  std::vector<Event> events;
  std::string first_cwd;
};

Imported import(const fs::path& p) {
  Imported out;
  ImportSink sink;
  sink.event = [&](const Event& e) { out.events.push_back(e); };
  sink.cwd = [&](const std::string& d) { out.first_cwd = d; };
  out.stats = import_file(p, {}, sink);
  return out;
}

size_t line_count(const fs::path& p) {
  std::string text = read_file(p);
  return size_t(std::count(text.begin(), text.end(), '\n')) +
         (!text.empty() && text.back() != '\n');
}

bool has(const Imported& im, EventKind kind, const std::string& path_or_text) {
  for (const auto& e : im.events)
    if (e.kind == kind && (e.path == path_or_text || e.text == path_or_text)) return true;
  return false;
}

#define REQUIRE_SAMPLES()           \
  if (!fs::is_directory(samples())) \
  GTEST_SKIP() << "shared sample transcripts not present at " << samples()

TEST(Import, ClaudeCodeSampleWithoutLoss) {
  REQUIRE_SAMPLES();
  Imported im = import(samples() / "claude_main.jsonl");
  EXPECT_EQ(im.stats.format, Format::ClaudeCode);
  EXPECT_EQ(im.stats.lines, line_count(samples() / "claude_main.jsonl"));
  EXPECT_EQ(im.stats.malformed, 0u);
  EXPECT_TRUE(im.stats.unknown.empty());
  EXPECT_FALSE(im.stats.torn_last_line);
  EXPECT_EQ(im.first_cwd, "/home/ana/kern");
  EXPECT_TRUE(has(im, EventKind::FileWrite, "/home/ana/kern/softmax.cu"));
  EXPECT_TRUE(
      has(im, EventKind::Command, "nvcc -O3 -arch=sm_90 -o bench softmax.cu bench.cu && ./bench"));
  EXPECT_TRUE(has(im, EventKind::ModelText, "Building and benchmarking."));
  bool subagent = false, command_cwd = false;
  for (const auto& e : im.events) {
    subagent = subagent || e.kind == EventKind::Subagent;
    command_cwd = command_cwd || (e.kind == EventKind::Command && e.cwd == "/home/ana/kern");
  }
  EXPECT_TRUE(subagent);
  EXPECT_TRUE(command_cwd);
}

TEST(Import, ClaudeSubagentSampleWithoutLoss) {
  REQUIRE_SAMPLES();
  Imported im = import(samples() / "claude_subagent_agent-a7f3c21.jsonl");
  EXPECT_EQ(im.stats.format, Format::ClaudeCode);
  EXPECT_EQ(im.stats.lines, line_count(samples() / "claude_subagent_agent-a7f3c21.jsonl"));
  EXPECT_EQ(im.stats.malformed, 0u);
  EXPECT_TRUE(im.stats.unknown.empty());
  EXPECT_FALSE(im.events.empty());
}

TEST(Import, CodexRolloutSampleWithoutLoss) {
  REQUIRE_SAMPLES();
  Imported im = import(samples() / "codex_rollout.jsonl");
  EXPECT_EQ(im.stats.format, Format::CodexRollout);
  EXPECT_EQ(im.stats.lines, line_count(samples() / "codex_rollout.jsonl"));
  EXPECT_EQ(im.stats.malformed, 0u);
  EXPECT_TRUE(im.stats.unknown.empty());
  EXPECT_TRUE(has(im, EventKind::FileRead,
                  "/home/ana/kern/ref_softmax.py"));  // sed -n, relative to workdir
  EXPECT_TRUE(has(im, EventKind::FileWrite, "/home/ana/kern/softmax.cu"));  // apply_patch Add File
  EXPECT_TRUE(has(im, EventKind::Command,
                  "'bash' '-lc' 'nvcc -O3 -o bench softmax.cu bench.cu && ./bench'"));
}

TEST(Import, CodexExecAndChildSamplesWithoutLoss) {
  REQUIRE_SAMPLES();
  Imported ex = import(samples() / "codex_exec.jsonl");
  EXPECT_EQ(ex.stats.format, Format::CodexExec);
  EXPECT_EQ(ex.stats.malformed, 0u);
  EXPECT_TRUE(ex.stats.unknown.empty());
  EXPECT_TRUE(has(ex, EventKind::FileWrite, "/home/ana/kern/softmax.cu"));
  Imported child = import(samples() / "codex_child_session_meta.jsonl");
  EXPECT_EQ(child.stats.format, Format::CodexRollout);
  EXPECT_TRUE(child.stats.unknown.empty());
  EXPECT_FALSE(child.first_cwd.empty());
}

TEST(Import, CompressedRolloutMatchesPlain) {
  REQUIRE_SAMPLES();
  test::TempDir dir;
  std::string plain = read_file(samples() / "codex_rollout.jsonl");
  std::string packed(ZSTD_compressBound(plain.size()), '\0');
  packed.resize(ZSTD_compress(packed.data(), packed.size(), plain.data(), plain.size(), 3));
  test::write_text(dir / "rollout.jsonl.zst", packed);
  Imported a = import(samples() / "codex_rollout.jsonl");
  Imported b = import(dir / "rollout.jsonl.zst");
  EXPECT_EQ(b.stats.format, Format::CodexRollout);
  EXPECT_EQ(a.stats.lines, b.stats.lines);
  ASSERT_EQ(a.events.size(), b.events.size());
  for (size_t i = 0; i < a.events.size(); ++i)
    EXPECT_EQ(a.events[i].path + a.events[i].text, b.events[i].path + b.events[i].text);
}

TEST(Import, SamplesAuditWithoutFindingsOrErrors) {
  REQUIRE_SAMPLES();
  std::vector<fs::path> in = {samples() / "claude_main.jsonl", samples() / "codex_rollout.jsonl",
                              samples() / "codex_exec.jsonl"};
  AuditReport r =
      run_audit(in, {}, load_audit_policy(fs::path(KD_SOURCE_DIR) / "policies/audit.json"));
  EXPECT_EQ(r.files.size(), 3u);
  EXPECT_EQ(audit_exit_status(r), 0);
}

TEST(Import, UnknownRecordsAreCountedNotFatal) {
  test::TempDir dir;
  std::string text = test::claude_text_line("/w", "hello") +
                     R"({"type":"brand-new-kind","uuid":"x","sessionId":"s","cwd":"/w"})"
                     "\n" +
                     R"({"type":"brand-new-kind","uuid":"y","sessionId":"s","cwd":"/w"})"
                     "\n" +
                     "{not json}\n" + test::claude_text_line("/w", "bye");
  test::write_text(dir / "s.jsonl", text);
  Imported im = import(dir / "s.jsonl");
  EXPECT_EQ(im.stats.unknown["brand-new-kind"], 2u);
  EXPECT_EQ(im.stats.malformed, 1u);
  EXPECT_EQ(im.stats.malformed_lines, std::vector<std::uint64_t>({4}));
  EXPECT_EQ(im.events.size(), 2u);
}

TEST(Import, UnrecognizedFormatIsAnError) {
  test::TempDir dir;
  test::write_text(dir / "g.jsonl", R"({"sessionId":"s","projectHash":"p","kind":"main"})"
                                    "\n");
  EXPECT_THROW(run_audit({dir / "g.jsonl"}, {},
                         load_audit_policy(fs::path(KD_SOURCE_DIR) / "policies/audit.json")),
               Error);
}

TEST(LineReader, MultiMegabyteLinesAndTornEnd) {
  test::TempDir dir;
  std::string big(5 << 20, 'x');
  test::write_text(dir / "f", "a\n" + big + "\n\nlast");
  LineReader r(dir / "f");
  std::string_view line;
  ASSERT_TRUE(r.next(&line));
  EXPECT_EQ(line, "a");
  ASSERT_TRUE(r.next(&line));
  EXPECT_EQ(line.size(), big.size());
  ASSERT_TRUE(r.next(&line));
  EXPECT_EQ(line, "");
  ASSERT_TRUE(r.next(&line));
  EXPECT_EQ(line, "last");
  EXPECT_TRUE(r.last_line_torn());
  EXPECT_EQ(r.line_number(), 4u);
  EXPECT_FALSE(r.next(&line));
}

TEST(LineReader, CorruptZstdIsANamedError) {
  test::TempDir dir;
  test::write_text(dir / "bad.jsonl.zst", std::string("\x28\xb5\x2f\xfd garbage garbage", 20));
  LineReader r(dir / "bad.jsonl.zst");
  std::string_view line;
  try {
    while (r.next(&line)) {
    }
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.jsonl.zst"), std::string::npos) << e.what();
  }
}

TEST(LineReader, MissingFileIsANamedError) {
  try {
    LineReader r("/nonexistent/x.jsonl");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("ENOENT"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kd::audit
