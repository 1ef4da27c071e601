#include "common/glob.h"

#include <gtest/gtest.h>

namespace kd {
namespace {

TEST(Glob, NamesStarOnly) {
  EXPECT_TRUE(glob_match("*_API_KEY", "ANTHROPIC_API_KEY"));
  EXPECT_TRUE(glob_match("LC_*", "LC_ALL"));
  EXPECT_TRUE(glob_match("*SECRET*", "MY_SECRET_X"));
  EXPECT_TRUE(glob_match("claude-*-4*", "claude-sonnet-4-5"));
  EXPECT_FALSE(glob_match("*_API_KEY", "API_KEYS"));
  EXPECT_FALSE(glob_match("TERM", "TERMINAL"));
  EXPECT_FALSE(glob_match("a?c", "abc")) << "'?' is not special in names";
  EXPECT_TRUE(glob_match("*", ""));
  EXPECT_FALSE(glob_match("", "x"));
}

TEST(Glob, PathsKeepStarsInsideAComponent) {
  EXPECT_TRUE(path_glob_match("a/**", "a/b/c"));
  EXPECT_TRUE(path_glob_match("a/**/c.md", "a/c.md"));
  EXPECT_TRUE(path_glob_match("a/**/c.md", "a/x/y/c.md"));
  EXPECT_TRUE(path_glob_match("**/solutions/*", "x/y/solutions/s.py"));
  EXPECT_TRUE(path_glob_match("**/solutions/*", "solutions/s.py"));
  EXPECT_FALSE(path_glob_match("**/solutions/*", "xsolutions/s.py")) << "** spans whole components";
  EXPECT_FALSE(path_glob_match("a/*", "a/b/c"));
  EXPECT_TRUE(path_glob_match("a/?.md", "a/b.md"));
  EXPECT_FALSE(path_glob_match("a/?.md", "a//.md"));
  EXPECT_FALSE(path_glob_match("a/b", "a/bc"));
  EXPECT_TRUE(path_glob_match("**", ""));
}

}  // namespace
}  // namespace kd
