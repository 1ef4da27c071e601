// The one RFC 3339 reader and the writers beside it.
#include "common/time.h"

#include <gtest/gtest.h>

namespace kd {
namespace {

TEST(Rfc3339, IsParsedStrictlyWithFieldsInRange) {
  EXPECT_EQ(parse_rfc3339("1970-01-01T00:00:00Z"), 0.0);
  EXPECT_EQ(parse_rfc3339("2026-03-02T10:00:00Z"), 1772445600.0);
  EXPECT_EQ(parse_rfc3339("2026-03-02t11:30:00+01:30"), 1772445600.0);
  EXPECT_EQ(parse_rfc3339("2026-03-02 09:00:00-01:00"), 1772445600.0);
  EXPECT_EQ(parse_rfc3339("2026-03-02T10:00:00.25Z"), 1772445600.25);
  EXPECT_EQ(parse_rfc3339("2024-02-29T00:00:00Z"), 1709164800.0);  // a leap day
  EXPECT_EQ(parse_rfc3339("2016-12-31T23:59:60Z"), 1483228800.0);  // a leap second
  for (const char* bad : {"",
                          "2026-03-02",
                          "2026-03-02T10:00:00",
                          "2026-13-02T10:00:00Z",
                          "2026-00-02T10:00:00Z",
                          "2026-02-30T10:00:00Z",
                          "2025-02-29T10:00:00Z",
                          "2026-03-02T24:00:00Z",
                          "2026-03-02T10:60:00Z",
                          "2026-03-02T10:00:61Z",
                          "2026-3-02T10:00:00Z",
                          "2026-03-+2T10:00:00Z",
                          "2026-03-02T 1:00:00Z",
                          "2026-03-02X10:00:00Z",
                          "2026-03-02T10:00:00.Z",
                          "2026-03-02T10:00:00+5:30",
                          "2026-03-02T10:00:00+05:301",
                          "2026-03-02T10:00:00+24:00",
                          "2026-03-02T10:00:00Zjunk",
                          "2026/03/02T10:00:00Z"})
    EXPECT_FALSE(parse_rfc3339(bad)) << bad;
}

TEST(Rfc3339, WrittenStampsReadBack) {
  EXPECT_EQ(format_rfc3339_ms(1772445600250), "2026-03-02T10:00:00.250Z");
  EXPECT_EQ(format_rfc3339_s(1772445600), "2026-03-02T10:00:00Z");
  EXPECT_EQ(parse_rfc3339(format_rfc3339_ms(1772445600250)), 1772445600.25);
  const std::string now = utc_now_rfc3339();
  ASSERT_TRUE(parse_rfc3339(now)) << now;
  EXPECT_EQ(now.size(), 24u) << now;
}

}  // namespace
}  // namespace kd
