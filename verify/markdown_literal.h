// Text from a receipt, an author or a verifier model, made literal before it is pasted into a
// wiki page: it reads as what it says and cannot add a section, a list, a link, an image, raw
// HTML, a table row or front matter to the page it lands in (docs/dispatcher.md, filing).
#pragma once

#include <string>
#include <string_view>

namespace kd::verify {

// One line of literal text: line breaks and other control characters become spaces and every
// character that could start inline markup is backslash-escaped (CommonMark's escapes), so
// nothing in it is a link, an image, HTML, emphasis, code or a table cell.
std::string literal_inline(std::string_view text);

// Several lines of literal text, as a fenced code block whose fence is longer than any run of
// backticks inside, so no line of the text can close it.
std::string literal_block(std::string_view text);

}  // namespace kd::verify
