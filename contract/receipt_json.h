// A JSON reader and canonical writer that reproduce Python's json module byte for byte, so a
// receipt's self-hash can be recomputed exactly as kgate computed it (docs/receipts.md).
//
// The reader keeps each number's original token, accepts Python's `NaN`, `Infinity` and
// `-Infinity`, and rejects what Python would not read (control characters in strings, invalid
// UTF-8, trailing data) plus duplicate keys, which Python would silently collapse.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kd::contract {

struct JsonMember;

struct JsonValue {
  enum class Kind { Null, Bool, Number, String, Array, Object };
  Kind kind = Kind::Null;
  bool boolean = false;
  // Number: the token as written. String: the decoded text in UTF-8, lone surrogates kept as
  // their 3-byte encodings so they survive a round trip.
  std::string text;
  std::vector<JsonValue> items;     // Array
  std::vector<JsonMember> members;  // Object, in file order

  const JsonValue* find(std::string_view key) const;
  bool is_integer_token() const;  // a Number written without fraction or exponent
  double number() const;          // a Number as a double (Python's float(), inf on overflow)
};

struct JsonMember {
  std::string key;
  JsonValue value;
};

// Parses one JSON document. Throws kd::Error naming the byte offset and the problem.
JsonValue parse_receipt_json(std::string_view text);

// json.dumps(value, sort_keys=True, separators=(",", ":")) with ensure_ascii, allow_nan.
std::string canonical_json(const JsonValue& value);

// Python's repr() of a float: shortest round-trip digits, fixed notation for exponents in
// [-4, 16), otherwise d.ddde±XX; "NaN", "Infinity", "-Infinity" as the json module writes them.
std::string python_float_repr(double value);

}  // namespace kd::contract
