#include "cli/args.h"

#include <gtest/gtest.h>

namespace kd::cli {
namespace {

const std::vector<OptSpec> kSpecs = {{"wiki"}, {"json", false}, {"ro", true, true}};

TEST(Args, ParsesValuesSwitchesRepeatsAndRest) {
  ParsedArgs p = parse_args(
      {"exec", "--wiki", "w", "--json", "--ro=a", "--ro", "b", "--", "ls", "--wiki"}, kSpecs);
  EXPECT_EQ(p.positional, std::vector<std::string>{"exec"});
  EXPECT_EQ(p.get("wiki"), "w");
  EXPECT_TRUE(p.has("json"));
  EXPECT_EQ(p.all("ro"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(p.rest, (std::vector<std::string>{"ls", "--wiki"}));
}

TEST(Args, RejectsUnknownMissingAndDuplicateOptionsByName) {
  auto message = [](std::vector<std::string> a) {
    try {
      parse_args(a, kSpecs);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(message({"--nope"}), "unknown option --nope");
  EXPECT_EQ(message({"--wiki"}), "option --wiki needs a value");
  EXPECT_EQ(message({"--wiki", "a", "--wiki", "b"}), "option --wiki given twice");
  EXPECT_EQ(message({"--json=1"}), "option --json takes no value");
  EXPECT_THROW(parse_args({}, kSpecs).required("wiki"), UsageError);
}

}  // namespace
}  // namespace kd::cli
