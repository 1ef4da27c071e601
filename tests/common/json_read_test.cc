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

template <typename F>
std::string error_of(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "accepted";
}

const json kDoc = json::parse(R"({
  "name": "box", "on": true, "n": 3, "x": 0.5, "tags": ["a", ""], "env": {"A": "1", "B": 2},
  "path": "rel/p", "mode": "fast", "inner": {"deep": {"k": 1}}, "list": [{"a": 1}, 2]
})");

TEST(JsonObjectReader, QuotedNamesTheKeyUnderItsPlace) {
  JsonObjectReader r(kDoc, "p.json");
  EXPECT_EQ(r.string("name"), "box");
  EXPECT_TRUE(r.boolean("on"));
  EXPECT_EQ(r.count_in("n", 1, 5), 3u);
  EXPECT_EQ(error_of([&] { r.string("gone"); }), "p.json: missing field \"gone\"");
  EXPECT_EQ(error_of([&] { r.boolean("name"); }), "p.json: \"name\" must be true or false");
  EXPECT_EQ(error_of([&] { r.count_in("n", 4, 9); }),
            "p.json: \"n\" must be an integer from 4 to 9");
  EXPECT_EQ(error_of([&] { r.strings("tags"); }), "p.json: \"tags[1]\" must be a non-empty string");
  EXPECT_EQ(error_of([&] { r.string_map("env"); }), "p.json: \"env.B\" must be a string");
  EXPECT_EQ(error_of([&] {
              r.choice("mode", {"slow", "safe"});
            }),
            "p.json: \"mode\" must be \"slow\" or \"safe\"");
  EXPECT_EQ(error_of([&] { r.object("inner").object("deep").string("k"); }),
            "p.json: inner: deep: \"k\" must be a non-empty string");
  EXPECT_EQ(error_of([&] { r.objects("list"); }), "p.json: list[1]: must be an object");
  EXPECT_EQ(error_of([&] { r.allow_only({"name"}); }), "p.json: unknown field \"env\"");
  EXPECT_EQ(error_of([] { JsonObjectReader(json::array(), "p.json"); }),
            "p.json: must be an object");
}

TEST(JsonObjectReader, PathNamesTheFieldFromTheTop) {
  JsonObjectReader r(kDoc, "p.json", FieldNames::Path);
  EXPECT_EQ(r.object("inner").object("deep").count("k", 9), 1u);
  // An absent field reads as what it must be, like a wrong one.
  EXPECT_EQ(error_of([&] { r.string("gone"); }), "p.json: gone must be a non-empty string");
  EXPECT_EQ(error_of([&] { r.object("gone"); }), "p.json: gone must be an object");
  EXPECT_EQ(error_of([&] { r.at("gone"); }), "p.json: gone is missing");
  EXPECT_EQ(error_of([&] { r.object("name"); }), "p.json: name must be an object");
  EXPECT_EQ(error_of([&] { r.object("inner").object("deep").string("k"); }),
            "p.json: inner.deep.k must be a non-empty string");
  EXPECT_EQ(error_of([&] { r.object("inner").object("deep").error("is odd"); }),
            "p.json: inner.deep: is odd");
  EXPECT_EQ(error_of([&] { r.object("inner").allow_only({}); }),
            "p.json: inner: unknown field \"deep\"");
  EXPECT_EQ(error_of([&] { r.strings("tags"); }), "p.json: tags[1] must be a non-empty string");
  EXPECT_EQ(error_of([&] { r.string_map("env"); }), "p.json: env.B must be a string");
  EXPECT_EQ(error_of([&] { r.absolute_path("path"); }), "p.json: path must be an absolute path");
  EXPECT_EQ(error_of([&] { r.number("x", 1, 2); }), "p.json: x must be a number from 1 to 2");
  EXPECT_EQ(error_of([&] { r.objects("list"); }), "p.json: list[1] must be an object");
  EXPECT_EQ(error_of([&] { r.error("is odd"); }), "p.json: is odd");
  EXPECT_EQ(error_of([] { JsonObjectReader(json(3), "p.json", FieldNames::Path); }),
            "p.json: top level must be an object");
}

}  // namespace
}  // namespace kd
