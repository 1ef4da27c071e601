// The LLM verifier's report (the four sections of the verifier's output contract), checked
// before it is accepted: the firing audit line in its grammar, and every decimal number it
// quotes found in the receipt. The session that writes it runs in the dispatcher; its report
// never decides the verdict.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kd::verify {

// Every problem of a report (the verifier's finish input) against the receipt's text.
std::vector<std::string> check_verifier_report(const nlohmann::json& report,
                                               const std::string& receipt_text);

// The four sections as markdown, headings included.
std::string render_verifier_report(const nlohmann::json& report);

}  // namespace kd::verify
