#include "briefs/markdown.h"

#include <gtest/gtest.h>

namespace kd::briefs {
namespace {

TEST(Markdown, SectionsOfAnyLevelRunToTheNextSameOrHigherHeading) {
  std::string body =
      "intro\n# One\na\n## One.A\nb\n### One.A.i\nc\n## One.B (detail)\nd\n# Two ##\ne\n";
  auto s = scan_sections(body, 1);
  ASSERT_EQ(s.size(), 5u);
  EXPECT_EQ(s[0].title, "One");
  EXPECT_EQ(s[0].level, 1);
  EXPECT_EQ(body.substr(s[0].begin, s[0].end - s[0].begin),
            "# One\na\n## One.A\nb\n### One.A.i\nc\n## One.B (detail)\nd\n");
  EXPECT_EQ(section_text(body, s[1], false), "b\n### One.A.i\nc");
  EXPECT_EQ(s[4].title, "Two");
  EXPECT_EQ(s[4].line, 10);
  EXPECT_TRUE(heading_matches(s[3].title, "One.B"));
  EXPECT_FALSE(heading_matches(s[3].title, "One"));
  EXPECT_FALSE(heading_matches("One.Bx", "One.B"));
}

TEST(Markdown, FencedCodeNeverStartsASection) {
  std::string body =
      "# Real\n```python\n# not a heading\n## nor this\n```\n~~~~\n# still code\n```\n~~~~\n"
      "#hashtag is not a heading\n    # indented code\n# After\n";
  auto s = scan_sections(body, 1);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].title, "Real");
  EXPECT_EQ(s[1].title, "After");
  EXPECT_NE(section_text(body, s[0], false).find("# not a heading"), std::string::npos);
}

TEST(Markdown, TrailingRulesAndBlankLinesAreNotPartOfASection) {
  std::string body = "## A\n\ntext\n\n---\n\n## B\nx\n";
  auto s = scan_sections(body, 1);
  EXPECT_EQ(section_text(body, s[0], true), "## A\n\ntext");
  EXPECT_EQ(section_text(body, s[0], false), "text");
}

TEST(Markdown, BoldLabeledParagraphs) {
  std::string text =
      "**Hypothesis:** one pass\ncontinues here.\n\n**Mechanism**: fewer reads.\n\n"
      "Some **Predicted signal** mid-paragraph.\n\n**Falsification criterion.** below 1.02\n";
  EXPECT_EQ(bold_paragraph(text, "Hypothesis"), "one pass\ncontinues here.");
  EXPECT_EQ(bold_paragraph(text, "Mechanism"), "fewer reads.");
  EXPECT_EQ(bold_paragraph(text, "Predicted signal"), std::nullopt);
  EXPECT_EQ(bold_paragraph(text, "Falsification criterion"), "below 1.02");
}

TEST(Markdown, CandidatePlanItems) {
  std::string text =
      "- [ ] cand1: implement it at bq512 — predict ≥1.5x (fewer writes)\n"
      "- [x] cand2: tile sweep 1024 — predict ~5% over cand1\n"
      "- [ ] cand3: sweep 2048 — VMEM-wall probe, predict compile fail\n"
      "- [ ] cand4: no prediction here\n"
      "- [ ] something else\n"
      "next-hypothesis leads (NOT plan items): split → v002\n"
      "```\n- [ ] cand9: inside a fence — predict nothing\n```\n";
  auto plan = parse_plan(text, 10);
  ASSERT_EQ(plan.size(), 5u);
  EXPECT_EQ(plan[0].id, "cand1");
  EXPECT_EQ(plan[0].text, "implement it at bq512");
  EXPECT_EQ(plan[0].prediction, "≥1.5x (fewer writes)");
  EXPECT_FALSE(plan[0].checked);
  EXPECT_EQ(plan[0].line, 10);
  EXPECT_TRUE(plan[1].checked);
  EXPECT_EQ(plan[2].prediction, "VMEM-wall probe, predict compile fail");
  EXPECT_EQ(plan[3].id, "cand4");
  EXPECT_EQ(plan[3].prediction, "");
  EXPECT_EQ(plan[4].id, "");
  EXPECT_EQ(plan[4].text, "something else");
}

}  // namespace
}  // namespace kd::briefs
