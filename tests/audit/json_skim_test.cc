#include "audit/json_skim.h"

#include <gtest/gtest.h>

namespace kd::audit {
namespace {

TEST(JsonSkim, FindsTopLevelStringsOnly) {
  SkimField f[] = {{"type", {}}, {"cwd", {}}};
  ASSERT_TRUE(skim_object(
      R"({"message":{"type":"inner","x":[1,{"cwd":"no"}]},"type":"user","n":-1.5e3,"cwd":"/a \"b\""})",
      f, 2));
  EXPECT_EQ(f[0].value, "user");
  EXPECT_EQ(f[1].value, R"(/a \"b\")");
}

TEST(JsonSkim, EscapedQuotesAndBracketsInsideStrings) {
  SkimField f[] = {{"type", {}}};
  ASSERT_TRUE(skim_object(R"({"text":"a \\\" } ] { [ \\\\","type":"t"})", f, 1));
  EXPECT_EQ(f[0].value, "t");
}

TEST(JsonSkim, RejectsMalformedAndTornLines) {
  SkimField f[] = {{"type", {}}};
  EXPECT_FALSE(skim_object(R"({"type":"user","message":{"content":"abc)", f, 1));
  EXPECT_FALSE(skim_object(R"({"type":"user"} trailing)", f, 1));
  EXPECT_FALSE(skim_object(R"(["type","user"])", f, 1));
  EXPECT_FALSE(skim_object(R"({"type" "user"})", f, 1));
  EXPECT_FALSE(skim_object(R"({"a":})", f, 1));
}

}  // namespace
}  // namespace kd::audit
