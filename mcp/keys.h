// Provider keys for `kdispatch mcp --keys FILE`: MCP clients strip or redact the environment
// they give a server, so keys may come from a file of KEY=value lines instead. The file must
// be readable by its owner only; the keys reach dispatched runs through their environment and
// nowhere else (never a tool argument, never a result).
#pragma once

#include <filesystem>
#include <map>
#include <string>

namespace kd::mcp {

// Throws kd::Error naming the file and the line: group or other may read it, a line is not
// NAME=value, a name is not an environment variable name, or a name appears twice. Blank lines
// and lines starting with '#' are skipped.
std::map<std::string, std::string> load_keys(const std::filesystem::path& file);

}  // namespace kd::mcp
