#include "common/display_width.h"

#include <gtest/gtest.h>

namespace kd {
namespace {

TEST(DisplayWidth, CountsColumnsNotBytes) {
  EXPECT_EQ(display_width("abc"), 3u);
  EXPECT_EQ(display_width("\xE2\x80\xA6"), 1u);              // … is three bytes
  EXPECT_EQ(display_width("\xE6\xBC\xA2\xE5\xAD\x97"), 4u);  // 漢字: two wide characters
  EXPECT_EQ(display_width("e\xCC\x81"), 1u);                 // e + combining acute
  EXPECT_EQ(display_width("\xF0\x9F\x9A\x80"), 2u);          // 🚀
  EXPECT_EQ(display_width("\xFF"
                          "a"),
            2u);  // a bad byte still takes a column
}

TEST(DisplayWidth, PadsByColumns) {
  EXPECT_EQ(pad_to_width("ab\xE2\x80\xA6", 5), "ab\xE2\x80\xA6  ");
  EXPECT_EQ(pad_to_width("abcdef", 3), "abcdef");
}

TEST(DisplayWidth, TruncatesOnCharacterBoundaries) {
  EXPECT_EQ(truncate_to_width("abcdef", 4), "abc\xE2\x80\xA6");
  EXPECT_EQ(truncate_to_width("abc", 4), "abc");
  // 漢字漢: a wide character never splits; the cut leaves room for the ellipsis.
  EXPECT_EQ(truncate_to_width("\xE6\xBC\xA2\xE5\xAD\x97\xE6\xBC\xA2", 4),
            "\xE6\xBC\xA2\xE2\x80\xA6");
  EXPECT_EQ(display_width(truncate_to_width("\xE6\xBC\xA2\xE5\xAD\x97\xE6\xBC\xA2", 4)), 3u);
}

}  // namespace
}  // namespace kd
