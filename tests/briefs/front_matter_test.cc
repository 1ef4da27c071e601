#include "briefs/front_matter.h"

#include <gtest/gtest.h>

#include "common/errors.h"

namespace kd::briefs {
namespace {

TEST(FrontMatter, ScalarsQuotedStringsAndKeysWithSpaces) {
  FrontMatter fm = parse_front_matter(
      "title: \"Kernel class: attention (\\\"quoted\\\")\"\n"
      "status: in_progress\n"
      "class page: kernels/classes/attention.md   # trailing comment\n"
      "single: 'it''s'\n"
      "bar: 1.02\n",
      "p.md", 1);
  ASSERT_EQ(fm.entries.size(), 5u);
  EXPECT_EQ(fm.find("title")->scalar, "Kernel class: attention (\"quoted\")");
  EXPECT_EQ(fm.find("class page")->scalar, "kernels/classes/attention.md");
  EXPECT_EQ(fm.find_any({"class_page", "class page"})->scalar, "kernels/classes/attention.md");
  EXPECT_EQ(fm.find("single")->scalar, "it's");
  EXPECT_EQ(fm.find("bar")->scalar, "1.02");
  EXPECT_EQ(fm.find("missing"), nullptr);
}

TEST(FrontMatter, InlineAndBlockLists) {
  FrontMatter fm = parse_front_matter(
      "tags: [kernel-class, \"a, b\", 'c']\n"
      "no_peek:\n"
      "  - raw/code/x/**\n"
      "  - \"y.py\"\n"
      "empty: []\n"
      "after: 1\n",
      "p.md", 1);
  const FrontValue* tags = fm.find("tags");
  ASSERT_TRUE(tags && tags->is_list);
  EXPECT_EQ(tags->items, (std::vector<std::string>{"kernel-class", "a, b", "c"}));
  const FrontValue* np = fm.find("no_peek");
  ASSERT_TRUE(np && np->is_list);
  EXPECT_EQ(np->items, (std::vector<std::string>{"raw/code/x/**", "y.py"}));
  EXPECT_TRUE(fm.find("empty")->is_list);
  EXPECT_TRUE(fm.find("empty")->items.empty());
  EXPECT_EQ(fm.find("after")->scalar, "1");
}

void expect_error(const std::string& yaml, const std::string& fragment) {
  try {
    parse_front_matter(yaml, "wiki/x.md", 1);
    FAIL() << "accepted: " << yaml;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("wiki/x.md:"), std::string::npos) << e.what();
  }
}

TEST(FrontMatter, MalformedInputIsNamedWithItsLine) {
  expect_error("a: 1\na: 2\n", "duplicate key \"a\"");
  expect_error("a: 1\nnot a pair\n", "wiki/x.md:3: front matter: expected 'key: value'");
  expect_error("title: \"open\n", "unterminated quoted string");
  expect_error("tags: [a, b\n", "unterminated inline list");
  expect_error("- orphan\n", "list item without a key");
  expect_error("map:\n  nested: 1\n", "nested mappings are not supported");
  expect_error("x: |\n", "block scalars are not supported");
  expect_error("bad$key: 1\n", "invalid key");
}

}  // namespace
}  // namespace kd::briefs
