#include "cli/model_args.h"

#include <string>

namespace kd::cli {

std::vector<OptSpec> model_option_specs() {
  return {{"provider"}, {"model"}, {"base-url"}, {"script"}, {"max-turns"}, {"max-cost"}};
}

agents::ModelConfig model_config(const ParsedArgs& p) {
  agents::ModelConfig m;
  m.provider = p.get("provider", "fake");
  m.model = p.get("model");
  m.base_url = p.get("base-url");
  m.script = p.get("script");
  if (m.provider == "fake" && m.script.empty())
    throw UsageError("--provider fake needs --script FILE");
  return m;
}

agents::Budgets session_budgets(const ParsedArgs& p) {
  agents::Budgets b;
  try {
    if (p.has("max-turns")) b.max_turns = std::stoi(p.get("max-turns"));
    if (p.has("max-cost")) b.max_cost_usd = std::stod(p.get("max-cost"));
  } catch (const std::exception&) {
    throw UsageError("--max-turns and --max-cost need a number");
  }
  return b;
}

}  // namespace kd::cli
