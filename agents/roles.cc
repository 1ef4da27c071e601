#include "agents/roles.h"

#include "contract/ledger.h"

namespace kd::agents {

std::string author_system_prompt(std::string_view brief, const std::vector<std::string>& plan_ids) {
  std::string columns;
  for (const auto& c : contract::kLedgerColumns)
    columns += " " + c + " |";
  std::string plan;
  for (const auto& id : plan_ids)
    plan += (plan.empty() ? "" : ", ") + id;
  std::string out(brief);
  if (!out.empty() && out.back() != '\n') out += '\n';
  out +=
      "\n# How this session ends\n\n"
      "You work only through the tools. Every path is relative to the work dir; the reference "
      "module, "
      "anything outside the work dir and the no-peek paths are out of reach, and attempts are "
      "recorded. "
      "Use `run` for CPU work and `run_on_chip` for anything that needs the chip; the chip lock is "
      "held "
      "for that call only. Commit each candidate that ran on the chip with `commit`, subject "
      "`cand<N>(<family> v<NNN>): <what> — <result>`.\n\n"
      "Call `finish` exactly once at the end, with:\n"
      "1. `ledger`: first line `loaded: [<the required-reading sections you read>]`, then the "
      "table\n"
      "   |" +
      columns +
      "\n"
      "   one row per attempt, failures and abandoned kernels included; `committed SHA` is the "
      "commit "
      "the `commit` tool returned (- when never committed); `receipt` is the saved kgate receipt "
      "path.\n"
      "2. `final_candidate`: its path under the work dir and its commit SHA (a SHA from the "
      "ledger).\n"
      "3. `mechanism`: one paragraph, only mechanisms you implemented.\n"
      "4. `escalations`: what, why, minutes ([] when none).\n"
      "5. `blockers`: what the stop rule cut off and any disagreement with the diagnosis ([] when "
      "none).\n"
      "6. `abandoned`: each candidate plan item you did not run, with the reason.\n"
      "7. `compliance`: confirm each activity constraint was obeyed.\n\n"
      "The candidate plan is the stop rule: " +
      (plan.empty() ? std::string("(no items)") : plan) +
      ". Every item needs a ledger row or an `abandoned` entry. Your numbers are author-side: "
      "report "
      "them against the bar and use no verdict words; verdicts come from independent verification. "
      "A `finish` that breaks these rules is returned to you with the list of what to fix.\n";
  return out;
}

std::string verifier_system_prompt(std::string_view verifier_brief) {
  return std::string(verifier_brief);
}

}  // namespace kd::agents
