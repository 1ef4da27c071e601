#include "common/words.h"

#include <gtest/gtest.h>

#include "common/errors.h"

namespace kd {
namespace {

TEST(SplitWords, QuotesKeepAWordWholeAndNothingIsExpanded) {
  using W = std::vector<std::string>;
  EXPECT_EQ(split_words("curl -sS --data-binary @- 'https://x/y?a=1&b=2'", "cmd"),
            (W{"curl", "-sS", "--data-binary", "@-", "https://x/y?a=1&b=2"}));
  EXPECT_EQ(split_words("a \"b c\" d\\ e $HOME *", "cmd"), (W{"a", "b c", "d e", "$HOME", "*"}));
  EXPECT_EQ(split_words("''", "cmd"), (W{""}));
}

TEST(SplitWords, BadQuotingAndEmptyAreErrorsNamingTheOption) {
  EXPECT_THROW(split_words("a 'b", "--notify-cmd"), Error);
  try {
    split_words("  ", "--notify-cmd");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "--notify-cmd is empty");
  }
}

}  // namespace
}  // namespace kd
