// Validation of the `finish` tool: the author-kernel output contract (ledger with its fixed
// columns and `loaded:` first line, final candidate path + SHA, mechanism, escalations,
// blockers, compliance) and the candidate plan as the stop rule.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kd::agents {

struct FinishContext {
  std::vector<std::string> plan_ids;  // candN ids of the stub's candidate plan
  bool compliance_required = false;   // the activity carried constraints (e.g. no-peek)
  // Optional checks the dispatcher can supply; unset means not checked here.
  std::function<bool(const std::string& sha)> commit_exists;
  std::function<bool(const std::string& receipt_path)> receipt_exists;
  // Another role's contract (the verifier's report) checked instead of the author's.
  std::function<std::vector<std::string>(const nlohmann::json& input)> check;
};

// Every problem of a finish payload (already schema-checked), each saying what to fix.
// Empty means accepted.
std::vector<std::string> check_finish(const nlohmann::json& input, const FinishContext& ctx);

// The tool error text for a rejected finish.
std::string finish_rejection(const std::vector<std::string>& problems);

}  // namespace kd::agents
