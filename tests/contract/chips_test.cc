#include "contract/chips.h"

#include <gtest/gtest.h>

#include "common/errors.h"
#include "common/policy_path.h"

namespace kd::contract {
namespace {

std::string error_of(const std::string& json) {
  try {
    parse_chip_inventory(json, "chips.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "accepted";
}

TEST(Chips, ParsesFieldsAndDefaultsTheLockPath) {
  auto inv = parse_chip_inventory(
      R"({"chips":[{"id":"0","kind":"cpu","env":{"A":"1"},"devices":["/dev/null"]},{"id":"7"}]})",
      "chips.json");
  ASSERT_EQ(inv.chips.size(), 2u);
  EXPECT_EQ(inv.chips[0].kind, "cpu");
  EXPECT_EQ(inv.chips[0].lock, "/tmp/tpu-chip-0.lock");
  EXPECT_EQ(inv.chips[0].env.at("A"), "1");
  EXPECT_EQ(inv.chips[1].kind, "tpu");
  EXPECT_EQ(inv.find("7")->lock, "/tmp/tpu-chip-7.lock");
  EXPECT_EQ(inv.find("8"), nullptr);
  EXPECT_EQ(inv.ids(), (std::vector<std::string>{"0", "7"}));
}

TEST(Chips, BadInventoriesAreRefusedNamingChipAndField) {
  EXPECT_EQ(error_of("[]"), "chips.json: expected an object with a \"chips\" array");
  EXPECT_EQ(error_of(R"({"chips":[{"kind":"tpu"}]})"),
            "chips.json: chips[0]: \"id\" must be a non-empty string");
  EXPECT_EQ(error_of(R"({"chips":[{"id":"1","kind":"fpga"}]})"),
            "chips.json: chips[0] (id \"1\"): kind \"fpga\" is not tpu, gpu or cpu");
  EXPECT_EQ(error_of(R"({"chips":[{"id":"1"},{"id":"1"}]})"),
            "chips.json: chips[1] (id \"1\"): duplicate id");
  EXPECT_EQ(error_of(R"({"chips":[{"id":"1","devices":["accel0"]}]})"),
            "chips.json: chips[0] (id \"1\"): devices[0] must be an absolute path");
  EXPECT_EQ(error_of(R"({"chips":[{"id":"1","lock":"/l"},{"id":"2","lock":"/l"}]})"),
            "chips.json: chips[1] (id \"2\"): lock file shared with another chip");
  EXPECT_EQ(error_of(R"({"chips":[{"id":"1","colour":"red"}]})"),
            "chips.json: chips[0]: unknown field \"colour\"");
  EXPECT_NE(error_of("{"), "accepted");
}

TEST(Chips, WrongTypesAreNamedErrors) {
  EXPECT_EQ(error_of(R"({"chips":[{"id":"1","kind":3}]})"),
            "chips.json: chips[0] (id \"1\"): \"kind\" must be a non-empty string");
  EXPECT_EQ(error_of(R"({"chips":[{"id":"1","lock":7}]})"),
            "chips.json: chips[0] (id \"1\"): \"lock\" must be an absolute path");
  EXPECT_EQ(error_of(R"({"chips":[{"id":"1","env":{"A":1}}]})"),
            "chips.json: chips[0] (id \"1\"): \"env.A\" must be a string");
  EXPECT_EQ(error_of(R"({"chips":[{"id":"1","devices":"/dev/a"}]})"),
            "chips.json: chips[0] (id \"1\"): \"devices\" must be an array of strings");
  EXPECT_EQ(error_of(R"({"chips":[7]})"), "chips.json: chips[0]: must be an object");
  EXPECT_EQ(error_of(R"({"chips":[],"spare":[]})"), "chips.json: unknown field \"spare\"");
  EXPECT_EQ(error_of("{").rfind("chips.json: not JSON: ", 0), 0u) << error_of("{");
}

TEST(Chips, DefaultInventoryLoads) {
  auto inv = load_chip_inventory(policy_file("chips.json"));
  EXPECT_GE(inv.chips.size(), 2u);
}

}  // namespace
}  // namespace kd::contract
