#include "common/json_read.h"

#include <gtest/gtest.h>

#include "common/errors.h"

namespace kd {
namespace {

using nlohmann::json;

TEST(JsonObjectReader, FirstUnknownIsTheFirstKeyOutsideTheListInTheObjectsOrder) {
  json j = {{"b", 1}, {"a", 2}, {"z", 3}, {"y", 4}};
  JsonObjectReader r(j, "p.json");
  EXPECT_EQ(r.first_unknown({"a", "b"}), "y");
  EXPECT_EQ(r.first_unknown({"a", "b", "y"}), "z");
  EXPECT_EQ(r.first_unknown({"a", "b", "y", "z"}), std::nullopt);
}

TEST(JsonObjectReader, AllowOnlyRefusesTheFirstUnknownField) {
  json j = {{"colour", 1}, {"name", "x"}};
  JsonObjectReader r(j, "p.json: items[0]");
  r.allow_only({"name", "colour"});
  try {
    r.allow_only({"name"});
    ADD_FAILURE() << "an unknown field was allowed";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "p.json: items[0]: unknown field \"colour\"");
  }
}

}  // namespace
}  // namespace kd
