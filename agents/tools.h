// The author's nine tools as data a model can follow (names, descriptions, JSON schemas), and
// argument validation that turns bad arguments into precise tool errors before any host runs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "agents/types.h"

namespace kd::agents {

// read_file, list_dir, write_file, edit_file, run, run_on_chip, git_diff, commit, finish.
const std::vector<ToolSpec>& author_tools();
// The LLM verifier's: read_file and list_dir, and a finish that carries its four report sections.
const std::vector<ToolSpec>& verifier_tools();

// The spec named `name` in `tools`, or nullptr.
const ToolSpec* find_tool(const std::vector<ToolSpec>& tools, const std::string& name);

// Checks a call against its spec's schema (the subset the tool schemas use: object with
// properties, required, additionalProperties false, types string/integer/number/boolean/
// array/object, items, enum, minimum/maximum, minLength). Returns the error message the model
// gets, or nullopt when the arguments are acceptable.
std::optional<std::string> validate_call(const std::vector<ToolSpec>& tools, const ToolCall& call);

}  // namespace kd::agents
