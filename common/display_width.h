// How many terminal columns UTF-8 text takes, so tables line up by what the eye sees rather than
// by bytes: "…" is three bytes and one column, a CJK character or an emoji two, a combining mark
// none. An approximation of wcwidth(3) that needs no locale.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace kd {

// Columns of `s`. Invalid UTF-8 counts one column per bad byte (a terminal shows a replacement).
std::size_t display_width(std::string_view s);

// `s` followed by spaces up to `width` columns (nothing added when it is already wider).
std::string pad_to_width(std::string_view s, std::size_t width);

// The longest prefix of `s` that fits in `width` columns, with "…" at its end when `s` was cut;
// never cuts inside a UTF-8 sequence.
std::string truncate_to_width(std::string_view s, std::size_t width);

}  // namespace kd
