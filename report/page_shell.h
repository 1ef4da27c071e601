// The frame every report page shares: the document head with its inline style, a Content
// Security Policy that lets nothing load from anywhere and runs only the report's own script
// (by its hash), and that script: sorting and filtering for tables, a refusals-only switch for
// transcripts. The pages work opened from disk and from any static server.
#pragma once

#include <string>
#include <string_view>

namespace kd::report {

// A whole page: `title` is escaped here; `body` is HTML the caller built (already escaped).
std::string html_page(std::string_view title, std::string_view body);

// The script's CSP source expression ('sha256-...'), as the pages declare it.
std::string script_hash_source();

}  // namespace kd::report
