// The transcript viewer's reading (both request forms, results joined to calls, the chain's
// state) and the renderers: hostile text escaped in HTML, colours only when asked in the
// terminal, a missing file shown as missing.
#include <gtest/gtest.h>

#include "common/files.h"
#include "report/html.h"
#include "report/html_text.h"
#include "report/terminal.h"
#include "report/transcript_view.h"
#include "report/write.h"
#include "tests/report/run_root_fixture.h"

namespace kd {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr const char* kHostile =
    "<script>window.__pwned=1</script><img src=x onerror=\"window.__pwned=2\">"
    "<a href=\"javascript:window.__pwned=3\">click</a></textarea><b>'bold'</b>";

TEST(ReportHtml, EscapesEveryMarkupCharacter) {
  EXPECT_EQ(report::escape("<a href=\"x\" title='y'>&</a>"),
            "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;");
}

TEST(TranscriptView, ReadsBothRequestFormsAndJoinsResultsToCalls) {
  test::TempDir dir;
  test::TranscriptBuilder t;
  t.add("header", {{"family", "fam"},
                   {"experiment", "v001"},
                   {"chip", "0"},
                   {"model", {{"provider", "fake"}, {"name", "m"}}}});
  t.add("request", {{"turn", 1}, {"attempt", 1}, {"body", {{"messages", {1, 2, 3}}}}});
  t.add("response", {{"turn", 1},
                     {"text", "hello"},
                     {"tool_calls", {{{"id", "c1"}, {"name", "run"}}}},
                     {"usage", {{"input_tokens", 10}, {"output_tokens", 2}}},
                     {"cost_usd", 0.5}});
  t.add("tool_call", {{"id", "c1"}, {"name", "run"}, {"input", {{"command", {"ls"}}}}});
  t.add(
      "tool_result",
      {{"id", "c1"}, {"name", "run"}, {"is_error", true}, {"exit_code", 2}, {"content", "denied"}});
  t.add("violation", {{"tool_call_id", "c1"},
                      {"layer", "landlock"},
                      {"op", "write"},
                      {"path", "/etc/x"},
                      {"detail", "EACCES"}});
  t.add("request", {{"turn", 2}, {"attempt", 1}, {"new_messages", {1, 2}}});
  t.add("mystery", {{"x", 1}});
  // A linear record whose output is a ref to the tool_result record.
  t.add("request", {{"turn", 3},
                    {"attempt", 1},
                    {"keep", 3},
                    {"append", {{{"role", "assistant"}}, {{"role", "user"}}}},
                    {"refs", {{4, "/content/0/content", 4}}}});
  t.add("end", {{"reason", "finished"}});
  fs::path path = t.write(dir, "author/transcript.jsonl");

  report::TranscriptView v = report::read_transcript(path);
  EXPECT_TRUE(v.chain_ok) << v.chain_reason;
  EXPECT_EQ(report::chain_status(v), "intact (10 records)");
  ASSERT_EQ(v.entries.size(), 9u);  // the result joins its call
  EXPECT_EQ(v.entries[1].text, "attempt 1, full request: 3 messages");
  EXPECT_EQ(v.entries[5].text, "attempt 1, 2 new messages");
  EXPECT_EQ(v.entries[7].text, "attempt 1, 3 messages kept, 2 new (1 tool output by reference)");
  const report::Entry& call = v.entries[3];
  ASSERT_EQ(call.kind, report::Entry::Kind::ToolCall);
  EXPECT_TRUE(call.call.has_result);
  EXPECT_TRUE(call.call.is_error);
  EXPECT_EQ(call.call.exit_code, 2);
  EXPECT_EQ(call.call.result, "denied");
  EXPECT_EQ(v.entries[4].kind, report::Entry::Kind::Violation);
  EXPECT_TRUE(v.entries[4].highlight);
  EXPECT_EQ(v.entries[6].kind, report::Entry::Kind::Unknown);
  EXPECT_EQ(v.violations, 1);
  EXPECT_DOUBLE_EQ(v.cost_usd, 0.5);
  EXPECT_EQ(v.end_reason, "finished");
}

TEST(TranscriptView, AnEditedLineIsShownBrokenAtItsLine) {
  test::TempDir dir;
  test::TranscriptBuilder t = test::author_transcript(3, "0", "fine", "ok", "10:00:00");
  std::string text = t.text();
  size_t at = text.find("\"fine\"", text.find("\"fine\"") + 1);  // in the second record with it
  text.replace(at, 6, "\"FINE\"");
  write_file_atomic(dir / "t.jsonl", text);
  report::TranscriptView v = report::read_transcript(dir / "t.jsonl");
  EXPECT_FALSE(v.chain_ok);
  EXPECT_EQ(v.broken_line, 4u);
  EXPECT_EQ(report::chain_status(v).rfind("broken at line 4: ", 0), 0u) << report::chain_status(v);
  EXPECT_FALSE(v.entries.empty());  // still rendered

  report::TranscriptView missing = report::read_transcript(dir / "nope.jsonl");
  EXPECT_TRUE(missing.missing);
  EXPECT_EQ(report::chain_status(missing), "missing");
  EXPECT_NE(report::render_transcript_html(missing, "turns").find("data-chain=\"missing\""),
            std::string::npos);
}

TEST(ReportHtml, HostileTextFromAuthorsAndToolsIsEscapedEverywhere) {
  test::TempDir dir;
  test::CampaignFixture c(dir.path(), "camp");
  std::string key = "fam/v001";
  c.verified(key, "0", "1", "10:00:00", "10:05:00", "10:07:00", "10:07:01", "refuted", 0.1);
  c.write_brief(key, kHostile, 1.1);
  c.write_transcript(key, test::author_transcript(2, "0", kHostile, kHostile, "10:00:00"));
  c.record(test::at("10:08:00"), "error", "<script>fam</script>/v002", {{"reason", kHostile}});
  report::WriteStats s = report::generate_report(dir.path(), dir / "out");
  for (const fs::path& page : {s.index, fs::path(dir / "out/experiments/camp--fam_v001.html")}) {
    std::string html = read_file(page);
    EXPECT_EQ(html.find("<script>window"), std::string::npos) << page;
    EXPECT_EQ(html.find("<img"), std::string::npos) << page;
    EXPECT_EQ(html.find("href=\"javascript"), std::string::npos) << page;
    EXPECT_EQ(html.find("</textarea>"), std::string::npos) << page;
    EXPECT_EQ(html.find("<script>fam"), std::string::npos) << page;
    EXPECT_NE(html.find("&lt;script&gt;window.__pwned=1&lt;/script&gt;"), std::string::npos)
        << page;
    // Exactly one script element: the report's own.
    size_t scripts = 0;
    for (size_t at = html.find("<script"); at != std::string::npos;
         at = html.find("<script", at + 1))
      ++scripts;
    EXPECT_EQ(scripts, 1u) << page;
    EXPECT_NE(html.find("Content-Security-Policy"), std::string::npos);
  }
}

TEST(ReportTerminal, ColoursOnlyWhenAskedAndNoRawControlCharacters) {
  test::TempDir dir;
  std::string long_output;
  for (int i = 0; i < 40; ++i)
    long_output += "line " + std::to_string(i) + "\n";
  test::TranscriptBuilder t =
      test::author_transcript(1, "0", "text with \x1b[31mescape\x1b[0m", long_output, "10:00:00");
  fs::path path = t.write(dir, "t.jsonl");
  report::TranscriptView v = report::read_transcript(path);
  report::TerminalOptions plain;
  std::string out = report::render_transcript_terminal(v, plain);
  EXPECT_EQ(out.find('\x1b'), std::string::npos);
  EXPECT_NE(out.find("text with ^[[31mescape"), std::string::npos) << out;
  EXPECT_NE(out.find("chain: intact"), std::string::npos);
  EXPECT_NE(out.find("lines folded"), std::string::npos) << out;
  EXPECT_NE(out.find("line 39"), std::string::npos);    // the tail is kept
  EXPECT_EQ(out.find("line 20\n"), std::string::npos);  // the middle is folded
  report::TerminalOptions colour;
  colour.colour = true;
  EXPECT_NE(report::render_transcript_terminal(v, colour).find("\x1b[32mchain: intact"),
            std::string::npos);
}

}  // namespace
}  // namespace kd
