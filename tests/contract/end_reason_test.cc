// Every end reason survives its text form: transcripts, run.json and the journal store the text.
#include "contract/end_reason.h"

#include <gtest/gtest.h>

namespace kd::contract {
namespace {

TEST(EndReason, EveryKindRoundTripsThroughItsText) {
  for (const EndReason& r :
       {EndReason::finished(), EndReason::without_finish(), EndReason::budget("turns"),
        EndReason::provider("http_401:authentication_error"), EndReason::stopped()}) {
    auto back = parse_end_reason(to_string(r));
    ASSERT_TRUE(back.has_value()) << to_string(r);
    EXPECT_EQ(*back, r) << to_string(r);
  }
  EXPECT_EQ(to_string(EndReason::stopped()), "stopped_by_supervisor");
  EXPECT_FALSE(parse_end_reason("stopped").has_value());
  EXPECT_FALSE(parse_end_reason("budget:").has_value());
}

}  // namespace
}  // namespace kd::contract
