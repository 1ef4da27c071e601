// Text into HTML: escaping and the number formats the report's pages share. Every string that
// came from an author, a transcript, a receipt or a file name goes through escape(); nothing
// else ever writes such text into a page.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kd::report {

// & < > " ' as character references: safe in element content and in quoted attributes.
std::string escape(std::string_view s);
// Appends escape(s) to `out` (the pages are built by appending).
void append_escaped(std::string& out, std::string_view s);

std::string fmt_fixed(double v, int decimals);
std::string fmt_cost(double usd);                         // "$0.123"
std::string fmt_tokens(long n);                           // "12,345"
std::string fmt_duration(double seconds);                 // "2h 03m", "4m 05s", "12.3s"
std::string fmt_speedup(const std::optional<double>& x);  // "1.234x" or "-"

// Base64 of bytes (for the CSP hash of the page's script).
std::string base64(std::string_view bytes);

}  // namespace kd::report
