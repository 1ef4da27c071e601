// The two glob dialects of the policies: names (environment variables, model ids) and
// '/'-separated paths (no-peek lists, audit rules).
#pragma once

#include <string_view>

namespace kd {

// '*' matches any run of characters; nothing else is special.
bool glob_match(std::string_view pattern, std::string_view text);

// Shell-style glob over '/'-separated paths: `*` and `?` stay within a component, `**` spans
// any number of whole components (including none).
bool path_glob_match(std::string_view pattern, std::string_view path);

}  // namespace kd
