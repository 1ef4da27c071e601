// The audit context taken from the wiki (`--wiki DIR --family SLUG --experiment vNNN`): the
// family binding's worktree, reference and no-peek list, the stub's plan, bar and commit time.
#pragma once

#include <filesystem>
#include <string>

#include "audit/context.h"

namespace kd::audit {

// Throws kd::Error naming what the wiki lacks (no binding, no stub).
AuditContext context_from_wiki(const std::filesystem::path& wiki, const std::string& family,
                               const std::string& experiment);

}  // namespace kd::audit
