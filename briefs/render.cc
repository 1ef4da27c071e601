// Markdown and JSON forms of a Brief. Both are pure functions of the Brief, with a fixed order,
// so the same wiki state renders byte-identical output.
#include <cstdio>

#include "briefs/brief.h"
#include "briefs/render_parts.h"
#include "common/sha256.h"

namespace kd::briefs {
namespace {

std::string bar_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string list_or_none(const std::vector<std::string>& items) {
  if (items.empty()) return "none\n";
  std::string out;
  for (const auto& i : items)
    out += "- " + code(i) + "\n";
  return out;
}

std::string plan_line(const PlanItem& p) {
  return std::string("- [") + (p.checked ? "x" : " ") + "] " + p.id + ": " + p.text +
         " \xE2\x80\x94 predict " + p.prediction;
}

}  // namespace

std::string Brief::markdown() const {
  const Binding& bd = binding;
  std::string m;
  m += "# Author brief: " + family + " " + experiment + "\n\n";
  m += "You author kernel candidates for this one experiment. Everything you need is below; the "
       "required reading is pasted, not linked. Write only inside the work dir.\n\n";
  m += "- wiki commit: " + code(wiki_commit) + "\n";
  m += "- experiment page: " + code(stub.path) + "\n";
  m += "- family binding: " + code(bd.path) + "\n\n";

  m += "## 1. Reference module\n\n";
  m += code(bd.reference) + " in the home repo " + code(home_repo) + " at " +
       code(bd.integration_branch) + " (commit " + code(home_commit) + "), sha256 " +
       code(reference_sha256) +
       ". It is the parity oracle (`create_inputs` + `workload`). Never "
       "edit it.\n\n";

  m += "## 2. Target path\n\n" + list_or_none(bd.target) + "\n";

  m += "## 3. Work dir\n\n";
  m += "Worktree " + code(worktree) + " on branch " + code(branch) + ", based on " +
       code(bd.integration_branch) + ". Everything you write goes there.\n\n";

  m += "## 4. Diagnosis\n\n";
  m += "Predicted intervention class: " + code(stub.intervention_class) + "\n\n";
  m += "### " + stub.k1_title + "\n\n" + stub.k1 + "\n\n";

  m += "## 5. Falsification bar\n\n";
  m += "Numeric bar (minimum speedup over the reference): **" + bar_number(stub.bar.value_or(0)) +
       "**\n\n";
  m += "**Hypothesis.** " + stub.hypothesis + "\n\n";
  m += "**Mechanism.** " + stub.mechanism + "\n\n";
  m += "**Predicted signal.** " + stub.predicted_signal + "\n\n";
  m += "**Falsification criterion.** " + stub.falsification + "\n\n";

  m += "## 6. parity_spec\n\n";
  m += code(bd.parity_spec) + "; graded dtype " + code(bd.dtype) + "; operating point " +
       code(bd.op_point) + "; variant " + code(stub.variant) + " (hardware " + code(bd.hardware) +
       ").\n\n";

  m += "## 7. Chip + lock\n\n";
  m += "Chip " + code(chip.id) + " (" + chip.kind + "), lock file " + code(chip.lock.string()) +
       ". Device runs go through `run_on_chip`, which holds the lock for that run only.\n";
  m += "Environment on the chip:\n";
  if (chip.env.empty()) m += "- none\n";
  for (const auto& [k, v] : chip.env)
    m += "- " + code(k + "=" + v) + "\n";
  m += "Device nodes:\n";
  if (chip.devices.empty()) m += "- none\n";
  for (const auto& d : chip.devices)
    m += "- " + code(d.string()) + "\n";
  m += "\n";

  m += "## 8. Activity\n\n" + code(stub.activity) +
       "\n\nNo-peek paths (never open, grep or import):\n" + list_or_none(bd.no_peek) + "\n";

  m += "## 9. Candidate plan\n\n";
  m += "The plan is the stop rule: run every item, or abandon it with a reason.\n\n";
  for (const auto& p : stub.plan)
    m += plan_line(p) + "\n";
  m += "\n";

  m += "## 10. Required reading\n\n";
  m += "Your first ledger line attests what you read: `loaded: [...]`. Parts:\n\n";
  for (size_t i = 0; i < reading.size(); ++i)
    m += std::to_string(i + 1) + ". " + code(reading[i].source) + " \xC2\xA7 " +
         reading[i].section + "\n";
  m += "\n";
  append_parts_and_warnings(m, reading, warnings);
  return m;
}

nlohmann::json Brief::json() const {
  using nlohmann::json;
  const Binding& bd = binding;
  json plan = json::array();
  for (const auto& p : stub.plan)
    plan.push_back(
        {{"id", p.id}, {"text", p.text}, {"prediction", p.prediction}, {"checked", p.checked}});
  json env = json::object();
  for (const auto& [k, v] : chip.env)
    env[k] = v;
  json devices = json::array();
  for (const auto& d : chip.devices)
    devices.push_back(d.string());
  auto parts = [](const std::vector<PastedPart>& list) {
    json out = json::array();
    for (const auto& p : list)
      out.push_back({{"source", p.source},
                     {"section", p.section},
                     {"sha256", p.sha256},
                     {"bytes", p.content.size()},
                     {"content", p.content}});
    return out;
  };
  json items = json::array();
  items.push_back({{"item", "reference module"},
                   {"path", bd.reference},
                   {"home_repo", home_repo},
                   {"integration_branch", bd.integration_branch},
                   {"home_commit", home_commit},
                   {"sha256", reference_sha256}});
  items.push_back({{"item", "target path"}, {"paths", bd.target}});
  items.push_back({{"item", "work dir"},
                   {"worktree", worktree},
                   {"branch", branch},
                   {"base", bd.integration_branch}});
  items.push_back({{"item", "diagnosis"},
                   {"intervention_class", stub.intervention_class},
                   {"section", stub.k1_title},
                   {"text", stub.k1}});
  items.push_back({{"item", "falsification bar"},
                   {"bar", stub.bar.value_or(0)},
                   {"falsification_criterion", stub.falsification},
                   {"hypothesis", stub.hypothesis},
                   {"mechanism", stub.mechanism},
                   {"predicted_signal", stub.predicted_signal}});
  items.push_back({{"item", "parity_spec"},
                   {"parity_spec", bd.parity_spec},
                   {"dtype", bd.dtype},
                   {"op_point", bd.op_point},
                   {"hardware", bd.hardware},
                   {"variant", stub.variant}});
  items.push_back({{"item", "chip + lock"},
                   {"chip", chip.id},
                   {"kind", chip.kind},
                   {"lock", chip.lock.string()},
                   {"env", env},
                   {"devices", devices}});
  items.push_back({{"item", "required reading"}, {"parts", parts(reading)}});
  items.push_back({{"item", "activity"}, {"activity", stub.activity}, {"no_peek", bd.no_peek}});
  items.push_back({{"item", "candidate plan"}, {"plan", plan}});
  return {{"family", family},
          {"experiment", experiment},
          {"wiki_commit", wiki_commit},
          {"stub", stub.path},
          {"binding", bd.path},
          {"category", stub.category},
          {"campaign_tag", bd.campaign_tag},
          {"items", items},
          {"verifier_reading", parts(verifier_reading)},
          {"warnings", warnings},
          {"markdown_sha256", sha256()}};
}

std::string Brief::sha256() const {
  return sha256_hex(markdown());
}

std::string code(const std::string& s) {
  return "`" + s + "`";
}

void append_parts_and_warnings(std::string& m, const std::vector<PastedPart>& reading,
                               const std::vector<std::string>& warnings) {
  for (size_t i = 0; i < reading.size(); ++i) {
    const PastedPart& p = reading[i];
    m += "### Part " + std::to_string(i + 1) + ": " + p.source + " \xC2\xA7 " + p.section + "\n\n";
    m += "sha256 " + code(p.sha256) + "\n\n" + p.content + "\n\n";
  }
  if (!warnings.empty()) {
    m += "## Warnings\n\n";
    for (const auto& w : warnings)
      m += "- " + w + "\n";
    m += "\n";
  }
  while (m.size() > 1 && m[m.size() - 2] == '\n')
    m.pop_back();
}

}  // namespace kd::briefs
