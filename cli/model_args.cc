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
  b.max_turns = static_cast<int>(int_option(p, "max-turns", b.max_turns, 1, 100'000));
  // 0 is an explicit "no cost budget"; a negative or NaN budget is never read as one.
  b.max_cost_usd = number_option(p, "max-cost", b.max_cost_usd, 0, 1e6);
  return b;
}

}  // namespace kd::cli
