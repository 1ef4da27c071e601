#include "briefs/page.h"

#include <gtest/gtest.h>

#include "common/errors.h"

namespace kd::briefs {
namespace {

TEST(Page, FrontMatterBodyAndLineNumbers) {
  Page p = parse_page("---\ntitle: t\ntags: [a]\n---\n\n## First\nx\n", "wiki/p.md");
  EXPECT_EQ(p.front.find("title")->scalar, "t");
  EXPECT_EQ(p.body, "\n## First\nx\n");
  ASSERT_EQ(p.sections.size(), 1u);
  EXPECT_EQ(p.sections[0].line, 6);
  EXPECT_NE(p.section("First"), nullptr);
}

TEST(Page, CrlfAndByteOrderMarkAreTolerated) {
  std::string lf = "---\nstatus: in_progress\n---\n# H\n**Hypothesis:** x\n";
  std::string crlf =
      "\xEF\xBB\xBF---\r\nstatus: in_progress\r\n---\r\n# H\r\n**Hypothesis:** x\r\n";
  Page a = parse_page(lf, "a.md");
  Page b = parse_page(crlf, "b.md");
  EXPECT_EQ(a.body, b.body);
  EXPECT_EQ(b.front.find("status")->scalar, "in_progress");
  EXPECT_EQ(bold_paragraph(b.text(*b.section("H")), "Hypothesis"), "x");
}

TEST(Page, NoFrontMatterIsABodyOnlyPage) {
  Page p = parse_page("# BRIEFS\n# 1. MEASUREMENT (helper)\n", "BRIEFS.md");
  EXPECT_TRUE(p.front.entries.empty());
  ASSERT_EQ(p.sections.size(), 2u);
  EXPECT_NE(p.section("1. MEASUREMENT"), nullptr);
}

TEST(Page, UnterminatedFrontMatterIsRefusedByName) {
  try {
    parse_page("---\ntitle: x\n# never closed\n", "wiki/broken.md");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "wiki/broken.md:1: front matter: no closing '---' line");
  }
}

}  // namespace
}  // namespace kd::briefs
