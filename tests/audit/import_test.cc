// The importers: the sample sessions of tests/audit/fixtures (Claude Code, a Claude subagent,
// Codex rollouts of mixed tool generations, `codex exec --json`) import without loss, long lines
// and .zst stream, unknown records are counted, torn last lines are reported.
#include <gtest/gtest.h>
#include <zstd.h>

#include <algorithm>
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
  return fs::path(KD_SOURCE_DIR) / "tests/audit/fixtures";
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

const std::string kWorktree = "/home/mei/lnorm";

size_t count(const Imported& im, EventKind kind) {
  return size_t(std::count_if(im.events.begin(), im.events.end(),
                              [&](const Event& e) { return e.kind == kind; }));
}

TEST(Import, ClaudeCodeSampleWithoutLoss) {
  Imported im = import(samples() / "claude_session.jsonl");
  EXPECT_EQ(im.stats.format, Format::ClaudeCode);
  EXPECT_EQ(im.stats.lines, line_count(samples() / "claude_session.jsonl"));
  EXPECT_EQ(im.stats.malformed, 0u);
  // summary, file-history-snapshot, progress and compact_boundary lines are known bookkeeping.
  EXPECT_TRUE(im.stats.unknown.empty());
  EXPECT_FALSE(im.stats.torn_last_line);
  EXPECT_EQ(im.first_cwd, kWorktree);
  EXPECT_TRUE(has(im, EventKind::FileRead, kWorktree + "/ref/layer_norm_ref.py"));
  EXPECT_TRUE(has(im, EventKind::FileWrite, kWorktree + "/lnorm_kernel.py"));
  EXPECT_TRUE(has(im, EventKind::FileRead, kWorktree + "/kernels"));         // Grep with a path
  EXPECT_TRUE(has(im, EventKind::FileWrite, kWorktree + "/logs/time.txt"));  // a redirection
  EXPECT_TRUE(has(im, EventKind::Command,
                  "python check_parity.py --shape tiny && python time_it.py > logs/time.txt"));
  EXPECT_TRUE(has(im, EventKind::ModelText, "Checking parity, then timing."));
  // A message whose content is a plain string is model text too.
  EXPECT_TRUE(has(im, EventKind::ModelText,
                  "The edit is in; the timing log is in logs/time.txt for the verifier."));
  EXPECT_TRUE(has(im, EventKind::Subagent, "general-purpose: Look for masking bugs"));
  // The Write and the relative Edit of the kernel, nothing for the Glob without a path.
  size_t kernel_writes = 0;
  bool command_cwd = false;
  for (const auto& e : im.events) {
    kernel_writes += e.kind == EventKind::FileWrite && e.path == kWorktree + "/lnorm_kernel.py";
    command_cwd = command_cwd || (e.kind == EventKind::Command && e.cwd == kWorktree);
  }
  EXPECT_EQ(kernel_writes, 2u);
  EXPECT_TRUE(command_cwd);
  EXPECT_EQ(count(im, EventKind::FileRead), 2u);
}

TEST(Import, ClaudeSubagentSampleWithoutLoss) {
  Imported im = import(samples() / "claude_subagent.jsonl");
  EXPECT_EQ(im.stats.format, Format::ClaudeCode);
  EXPECT_EQ(im.stats.lines, line_count(samples() / "claude_subagent.jsonl"));
  EXPECT_EQ(im.stats.malformed, 0u);
  EXPECT_TRUE(im.stats.unknown.empty());
  EXPECT_TRUE(has(im, EventKind::FileRead, kWorktree + "/lnorm_kernel.py"));
  EXPECT_TRUE(has(im, EventKind::Command, "grep -n mask lnorm_kernel.py"));
  EXPECT_TRUE(has(im, EventKind::ModelText, "The mask covers every row."));
}

TEST(Import, CodexRolloutSampleWithoutLoss) {
  Imported im = import(samples() / "codex_rollout.jsonl");
  EXPECT_EQ(im.stats.format, Format::CodexRollout);
  EXPECT_EQ(im.stats.lines, line_count(samples() / "codex_rollout.jsonl"));
  EXPECT_EQ(im.stats.malformed, 0u);
  EXPECT_TRUE(im.stats.unknown.empty());
  EXPECT_EQ(im.first_cwd, kWorktree);
  EXPECT_TRUE(has(im, EventKind::FileRead,
                  kWorktree + "/ref/layer_norm_ref.py"));  // sed -n, relative to workdir
  EXPECT_TRUE(has(im, EventKind::Command, "sed -n 1,60p ref/layer_norm_ref.py"));
  EXPECT_TRUE(has(im, EventKind::FileWrite, kWorktree + "/lnorm_kernel.py"));  // Add File
  EXPECT_TRUE(has(im, EventKind::Command, "'bash' '-lc' 'python check_parity.py --shape tiny'"));
  // exec_command's relative workdir is resolved against the session's cwd.
  EXPECT_TRUE(has(im, EventKind::FileWrite, kWorktree + "/bench/logs/time.txt"));
  EXPECT_TRUE(has(im, EventKind::Command, "'ls' 'logs'"));  // local_shell_call
  EXPECT_TRUE(has(im, EventKind::Subagent, "reviewer"));    // spawn_agent
  EXPECT_TRUE(has(im, EventKind::ModelText,
                  "The kernel is in lnorm_kernel.py; its timing log is logs/time.txt for the "
                  "verifier."));
  // The Add File patch and the older generation's apply_patch argv inside `shell`.
  size_t kernel_writes = 0;
  for (const auto& e : im.events)
    kernel_writes += e.kind == EventKind::FileWrite && e.path == kWorktree + "/lnorm_kernel.py";
  EXPECT_EQ(kernel_writes, 2u);
  // event_msg lines repeat what the calls say: no event of their own.
  EXPECT_EQ(count(im, EventKind::ModelText), 1u);
}

TEST(Import, CodexExecAndChildSamplesWithoutLoss) {
  Imported ex = import(samples() / "codex_exec.jsonl");
  EXPECT_EQ(ex.stats.format, Format::CodexExec);
  EXPECT_EQ(ex.stats.lines, line_count(samples() / "codex_exec.jsonl"));
  EXPECT_EQ(ex.stats.malformed, 0u);
  EXPECT_TRUE(ex.stats.unknown.empty());
  EXPECT_TRUE(ex.first_cwd.empty());  // the exec stream records no directory
  EXPECT_TRUE(has(ex, EventKind::FileWrite, kWorktree + "/lnorm_kernel.py"));
  EXPECT_TRUE(has(ex, EventKind::ModelText, "The kernel is written; the verifier times it."));
  EXPECT_EQ(count(ex, EventKind::Command), 1u);  // item.started is not a second command
  Imported child = import(samples() / "codex_child_rollout.jsonl");
  EXPECT_EQ(child.stats.format, Format::CodexRollout);
  EXPECT_EQ(child.stats.malformed, 0u);
  EXPECT_TRUE(child.stats.unknown.empty());
  EXPECT_EQ(child.first_cwd, kWorktree);
  EXPECT_TRUE(has(child, EventKind::Command, "grep -n mask lnorm_kernel.py"));
}

TEST(Import, CompressedRolloutMatchesPlain) {
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
  std::vector<fs::path> in = {samples() / "claude_session.jsonl",
                              samples() / "claude_subagent.jsonl",
                              samples() / "codex_rollout.jsonl", samples() / "codex_exec.jsonl",
                              samples() / "codex_child_rollout.jsonl"};
  AuditReport r =
      run_audit(in, {}, load_audit_policy(fs::path(KD_SOURCE_DIR) / "policies/audit.json"));
  EXPECT_EQ(r.files.size(), 5u);
  EXPECT_TRUE(r.findings.empty()) << r.findings.front().defect;
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
