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

// Found by fuzz_json_skim: the skim must report what a full parse holds for the key.
TEST(JsonSkim, AgreesWithAFullParseOnRepeatedAndEscapedKeys) {
  SkimField f[] = {{"type", {}}};
  ASSERT_TRUE(skim_object(R"({"type":"note","type":"response"})", f, 1));
  EXPECT_EQ(f[0].value, "response");
  f[0].value.reset();
  ASSERT_TRUE(skim_object(R"({"type":"note","type":{"x":1}})", f, 1));
  EXPECT_EQ(f[0].value, std::nullopt);
  // "\u0074ype" is "type" once decoded: left to the full parse.
  EXPECT_FALSE(skim_object(R"({"type":"note","\u0074ype":"response"})", f, 1));
}

}  // namespace
}  // namespace kd::audit
