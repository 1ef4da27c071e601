// The text checks of author output: verdict language and speedup numbers claimed without a
// receipt. Each returns the offending snippet, or nothing.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "audit/policy.h"

namespace kd::audit {

// A policy verdict marker anywhere, or a verdict word (whole word, any case) in a sentence that
// also has one of the policy's context words.
std::optional<std::string> find_verdict_language(std::string_view text, const AuditPolicy& policy);

// A speedup claim ("1.3x", "2.0×", "speedup of 1.2") in text that names no receipt.
std::optional<std::string> find_unreceipted_speedup(std::string_view text);

// Front matter of a markdown page: the value of `key:` between the leading `---` lines, or "".
std::string front_matter_value(std::string_view page, std::string_view key);

}  // namespace kd::audit
