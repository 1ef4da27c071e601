#include "briefs/verifier_brief.h"

#include <cstdio>

#include "briefs/render_parts.h"
#include "common/errors.h"
#include "common/sha256.h"

namespace kd::briefs {

VerifierBriefOutcome make_verifier_brief(const Brief& a, const VerifierInputs& in) {
  VerifierBriefOutcome out;
  Problems& ps = out.problems;
  auto absolute = [&](const char* field, const std::filesystem::path& p) {
    if (p.empty())
      ps.push_back({field, "missing"});
    else if (!p.is_absolute())
      ps.push_back({field, quote(p.string()) + " must be an absolute path"});
  };
  absolute("experiment_page_path", in.wiki);
  absolute("baseline_path", in.reference);
  absolute("candidate_path", in.candidate);
  absolute("artifact_dir", in.artifact_dir);
  if (in.chip.id.empty()) ps.push_back({"chip", "missing"});
  if (in.mode != "screen" && in.mode != "full")
    ps.push_back({"mode", quote(in.mode) + " is neither screen nor full"});
  if (a.verifier_reading.empty())
    ps.push_back(
        {"verifier reading", "the author brief carries no BRIEFS sections for the verifier"});
  if (!ps.empty()) return out;

  VerifierBrief v;
  v.family = a.family;
  v.experiment = a.experiment;
  v.author_brief_sha256 = a.sha256();
  v.experiment_page = in.wiki / a.stub.path;
  v.reference = in.reference;
  v.reference_sha256 = a.reference_sha256;
  v.candidate = in.candidate;
  v.parity_spec = a.binding.parity_spec;
  v.chip = in.chip;
  v.artifact_dir = in.artifact_dir;
  v.mode = in.mode;
  v.author_claim = in.author_claim;
  v.bar = a.stub.bar.value_or(0);
  v.hypothesis = a.stub.hypothesis;
  v.mechanism = a.stub.mechanism;
  v.predicted_signal = a.stub.predicted_signal;
  v.falsification = a.stub.falsification;
  v.reading = a.verifier_reading;
  if (in.chip.id == a.chip.id)
    v.warnings.push_back("the verifier runs on the author's chip " + quote(in.chip.id) +
                         " (no other chip was free)");
  out.brief = std::move(v);
  return out;
}

std::string VerifierBrief::markdown() const {
  char bar_text[32];
  std::snprintf(bar_text, sizeof bar_text, "%.6g", bar);
  std::string m = "# Verifier brief: " + family + " " + experiment + "\n\n";
  m += "Measure the candidate independently, in a fresh process, on your own chip. Cite only "
       "numbers from your own receipt.\n\n";
  m += "| field | value |\n|---|---|\n";
  m += "| experiment_page_path | " + code(experiment_page.string()) + " |\n";
  m += "| baseline_path | " + code(reference.string()) + " (sha256 " + code(reference_sha256) +
       ") |\n";
  m += "| candidate_path | " + code(candidate.string()) + " |\n";
  m += "| parity_spec | " + code(parity_spec) + " |\n";
  std::string env;
  for (const auto& [k, val] : chip.env)
    env += (env.empty() ? "" : " ") + k + "=" + val;
  m += "| chip | " + code(chip.id) + " (lock " + code(chip.lock.string()) +
       (env.empty() ? "" : ", " + code(env)) + ") |\n";
  m += "| artifact_dir | " + code(artifact_dir.string()) + " |\n";
  m += "| mode | " + code(mode) + " |\n";
  m += "| author_claim | " +
       (author_claim ? *author_claim + " (author-side, not your numbers)" : "none") + " |\n\n";
  m += "## Pre-registered bar\n\nMinimum speedup: **" + std::string(bar_text) + "**\n\n";
  m += "**Hypothesis.** " + hypothesis + "\n\n**Mechanism.** " + mechanism +
       "\n\n**Predicted signal.** " + predicted_signal + "\n\n**Falsification criterion.** " +
       falsification + "\n\n";
  m += "## Required reading\n\n";
  append_parts_and_warnings(m, reading, warnings);
  return m;
}

nlohmann::json VerifierBrief::json() const {
  nlohmann::json parts = nlohmann::json::array();
  for (const auto& p : reading)
    parts.push_back({{"source", p.source},
                     {"section", p.section},
                     {"sha256", p.sha256},
                     {"content", p.content}});
  nlohmann::json env = nlohmann::json::object();
  for (const auto& [k, val] : chip.env)
    env[k] = val;
  return {{"family", family},
          {"experiment", experiment},
          {"author_brief_sha256", author_brief_sha256},
          {"experiment_page_path", experiment_page.string()},
          {"baseline_path", reference.string()},
          {"reference_sha256", reference_sha256},
          {"candidate_path", candidate.string()},
          {"parity_spec", parity_spec},
          {"chip", {{"id", chip.id}, {"lock", chip.lock.string()}, {"env", env}}},
          {"artifact_dir", artifact_dir.string()},
          {"mode", mode},
          {"author_claim", author_claim ? nlohmann::json(*author_claim) : nlohmann::json()},
          {"bar", bar},
          {"falsification_criterion", falsification},
          {"reading", parts},
          {"warnings", warnings},
          {"markdown_sha256", sha256()}};
}

std::string VerifierBrief::sha256() const {
  return sha256_hex(markdown());
}

}  // namespace kd::briefs
