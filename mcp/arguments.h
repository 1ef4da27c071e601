// Tool arguments checked against the tool's input schema before a handler sees them: the subset
// of JSON Schema the tools use (object, properties of type string / integer / number / boolean /
// array of strings, enum, minimum / maximum, required, additionalProperties false). Returns
// every problem, each naming the argument, so a model can correct all of them at once.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kd::mcp {

std::vector<std::string> check_arguments(const nlohmann::json& schema,
                                         const nlohmann::json& arguments);

}  // namespace kd::mcp
