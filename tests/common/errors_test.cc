#include "common/errors.h"

#include <gtest/gtest.h>

#include <cerrno>

namespace kd {
namespace {

TEST(Errors, NamesTheCallTheObjectAndTheErrno) {
  EXPECT_EQ(sys_message("mount", "\"/repo\" -> \"/work\", MS_BIND|MS_RDONLY", EPERM),
            "mount(\"/repo\" -> \"/work\", MS_BIND|MS_RDONLY): EPERM");
  EXPECT_EQ(errno_name(EROFS), "EROFS");
  EXPECT_EQ(errno_name(100000), "errno 100000");
}

TEST(Errors, QuotesEscapeQuotesAndBackslashes) {
  EXPECT_EQ(quote("a\"b\\c"), "\"a\\\"b\\\\c\"");
}

TEST(Errors, ThrowSysCarriesTheMessage) {
  try {
    throw_sys("open", quote("/nope"), ENOENT);
    FAIL() << "throw_sys returned";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "open(\"/nope\"): ENOENT");
  }
}

}  // namespace
}  // namespace kd
