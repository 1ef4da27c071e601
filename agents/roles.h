// System prompts per role (docs/briefs.md): the author gets its brief plus the output contract it
// must return through `finish`; the verifier gets its own brief and nothing else.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kd::agents {

// The brief as rendered by `kdispatch brief` (markdown), then the contract and the tool rules.
std::string author_system_prompt(std::string_view brief_markdown,
                                 const std::vector<std::string>& plan_ids);

// The verifier brief only; nothing of the author's session.
std::string verifier_system_prompt(std::string_view verifier_brief_markdown);

}  // namespace kd::agents
