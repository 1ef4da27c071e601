// The MODEL options shared by the commands that talk to a model (docs/architecture.md):
// --provider anthropic|openai|fake [--model NAME] [--base-url URL] [--script FILE], and the
// per-session budgets.
#pragma once

#include <vector>

#include "agents/model_config.h"
#include "cli/args.h"

namespace kd::cli {

std::vector<OptSpec> model_option_specs();

// Throws UsageError for a fake provider without a script or a budget that is not a number.
agents::ModelConfig model_config(const ParsedArgs& p);
agents::Budgets session_budgets(const ParsedArgs& p);

}  // namespace kd::cli
