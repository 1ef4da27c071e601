// The canonical writer against Python's json module, value by value.
#include "contract/receipt_json.h"

#include <gtest/gtest.h>

#include <string>

#include "common/errors.h"
#include "tests/support/process.h"

namespace kd::contract {
namespace {

// What /usr/bin/python3 prints for json.dumps(json.loads(text), sort_keys=True,
// separators=(",",":")).
std::string python_canonical(const std::string& text) {
  auto r =
      test::run_process({"/usr/bin/python3", "-c",
                         "import json,sys\n"
                         "sys.stdout.write(json.dumps(json.loads(sys.stdin.read()), sort_keys=True,"
                         " separators=(',', ':')))"},
                        text);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.out;
}

TEST(ReceiptJson, CanonicalMatchesPythonOnTrickyValues) {
  const std::string inputs[] = {
      R"({"b":1e-05,"a":1e+16,"c":0.30000000000000004,"d":-0.0,"e":123456789012345678901234567890})",
      R"({"nan":NaN,"inf":Infinity,"ninf":-Infinity,"big":1e400,"tiny":1e-400,"neg0":-0})",
      R"({"x":[1.5,2.0,100.0,1e15,1e16,0.0001,0.00001,1E5,5e-324,1.7976931348623157e308]})",
      R"({"é":"ünïcödé","😀":"\ud83d\ude00 emoji","ctl":"\u0001\u001f\u007f\b\f\n\r\t\"\\/"})",
      R"({"lone":"\ud800x\udc00","zz":{"y":[{"b":null,"a":true},false,[]],"a":{}},"A":"","a":"Z"})",
      R"({"k\u0000":1,"k":2,"ka":3,"k\u00ff":4,"\uffff":5,"\ud83d\ude00":6})",
      R"([1,  2 ,{"a" : "b"}, "\u00e9t\u00e9"])",
  };
  for (const auto& in : inputs)
    EXPECT_EQ(canonical_json(parse_receipt_json(in)), python_canonical(in)) << in;
}

TEST(ReceiptJson, FloatReprMatchesPythonRepr) {
  const double values[] = {0.1 + 0.2, 1e16, 1e15, 123456.789, 1e-5, 0.001,
                           2.5e-7,    1e22, 3.0,  -7.25e100,  0.0};
  std::string py = "import sys\nfor v in sys.argv[1:]: print(repr(float(v)))";
  std::vector<std::string> argv = {"/usr/bin/python3", "-c", py};
  std::string expected_cpp;
  for (double v : values) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    argv.push_back(buf);
    expected_cpp += python_float_repr(v) + "\n";
  }
  auto r = test::run_process(argv);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(expected_cpp, r.out);
}

TEST(ReceiptJson, RejectsWhatPythonRejectsAndDuplicates) {
  const char* bad[] = {
      R"({"a":1,"a":2})",  // duplicate key
      R"({"a":1)",         // truncated
      R"({"a":"x)",        // unterminated string
      "{\"a\":\"\x01\"}",  // raw control character
      "{\"a\":\"\xff\"}",  // invalid UTF-8
      R"({"a":01})",       // leading zero
      R"({"a":1} x)",      // trailing data
      R"({"a":.5})",       // bare fraction
      R"({"a":"\q"})",     // bad escape
      R"({"a":nan})",      // lower-case nan
  };
  for (const char* text : bad)
    EXPECT_THROW(parse_receipt_json(text), Error) << text;
}

TEST(ReceiptJson, ErrorNamesTheOffset) {
  try {
    parse_receipt_json(R"({"a":1,"a":2})");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("duplicate key \"a\""), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("byte 7"), std::string::npos) << e.what();
  }
}

TEST(ReceiptJson, DeepNestingIsRefusedNotACrash) {
  std::string deep(100000, '[');
  EXPECT_THROW(parse_receipt_json(deep), Error);
}

}  // namespace
}  // namespace kd::contract
