#include "dispatcher/verify_run.h"

#include <algorithm>
#include <cstdio>

#include "briefs/brief.h"
#include "common/agent_file.h"
#include "common/errors.h"
#include "common/files.h"
#include "common/json_read.h"
#include "contract/end_reason.h"
#include "contract/receipt_signature.h"
#include "contract/run_record.h"
#include "contract/wiki_layout.h"
#include "dispatcher/campaign_state.h"
#include "dispatcher/chip_lock.h"
#include "dispatcher/experiment_error.h"
#include "dispatcher/llm_verifier.h"
#include "verify/filing.h"
#include "verify/verification.h"

namespace kd::dispatcher {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

json read_object(const fs::path& p, const std::string& what) {
  return JsonObjectReader(parse_json_document(read_agent_file(p, kMaxAgentJsonBytes),
                                              what + " " + quote(p.string())),
                          what + " " + quote(p.string()))
      .raw();
}

// The optional LLM verifier as the verification's reviewer of a valid receipt.
verify::Reviewer llm_reviewer(const agents::ModelConfig& model, const briefs::Brief& brief,
                              const fs::path& run_dir, const fs::path& wiki) {
  return [&model, &brief, run_dir, wiki](const verify::ReviewInput& in) {
    verify::Review out;
    contract::Chip chip{in.chip, "", "", {}, {}};
    briefs::VerifierBriefOutcome vb = briefs::make_verifier_brief(
        brief, {wiki, in.reference, in.candidate, chip, in.artifact_dir, in.mode, std::nullopt});
    if (!vb.brief) {
      out.record = {{"error", briefs::render_problems(vb.problems)}};
      return out;
    }
    LlmVerifierResult r = run_llm_verifier(
        {model, *vb.brief, run_dir, in.snapshot, in.receipt, in.receipt_rel, chip});
    out.record = {{"end_reason", to_string(r.end_reason)},
                  {"transcript_head", r.transcript_head},
                  {"accepted", r.sections.has_value()}};
    out.sections = r.sections;
    out.transcript_head = r.transcript_head;
    return out;
  };
}

}  // namespace

std::vector<contract::Chip> verifier_chips(const contract::ChipInventory& inv,
                                           const std::string& author_chip,
                                           const std::optional<std::string>& requested,
                                           const std::vector<std::string>& busy) {
  if (requested) {
    const contract::Chip* c = inv.find(*requested);
    if (!c) throw Error("chip " + *requested + " is not in the inventory " + inv.source.string());
    return {*c};
  }
  const contract::Chip* own = inv.find(author_chip);
  const size_t n = inv.chips.size();
  const size_t first = own ? size_t(own - inv.chips.data()) + 1 : 0;
  std::vector<contract::Chip> out;
  for (size_t k = 0; k < n; ++k) {
    const contract::Chip& c = inv.chips[(first + k) % n];
    if (c.id != author_chip && (!own || c.kind == own->kind)) out.push_back(c);
  }
  std::stable_partition(out.begin(), out.end(), [&](const contract::Chip& c) {
    return std::find(busy.begin(), busy.end(), c.id) == busy.end();
  });
  if (out.empty() && own) out.push_back(*own);
  if (out.empty())
    throw ExperimentError(contract::ErrorCause::ChipUnavailable,
                          "the inventory " + inv.source.string() + " has no chip to verify on");
  return out;
}

VerifyReport run_verify(const VerifyOptions& o) {
  const fs::path run_dir = fs::absolute(o.run_dir);
  const contract::RunRecord run = contract::RunRecord::load(run_dir);
  const contract::ExperimentId id{run.family, run.experiment};
  JournalSet own_journals;
  Journal& journal = (o.journals ? o.journals : &own_journals)->at(run_dir.parent_path());

  VerifyReport report;
  report.experiment = id.key();
  report.outcome_path = run_dir / "outcome.json";
  std::optional<json> prior;  // the receipt record a previous attempt validated
  for (const auto& s : fold_journal(journal.records())) {
    if (s.experiment != id.key()) continue;
    if (!s.verdict.empty() && fs::is_regular_file(report.outcome_path)) {
      report.reused = true;
      report.outcome = read_object(report.outcome_path, "outcome");
      report.verdict = contract::parse_verdict(report.outcome.value("verdict", ""))
                           .value_or(contract::Verdict::Inconclusive);
      report.reasons = report.outcome.value("reasons", std::vector<std::string>{});
    }
    if (!s.receipt.is_null()) prior = s.receipt;
  }
  if (!report.reused) {
    // A session the provider ended is an error of the author phase, never a run to judge.
    if (auto end = contract::parse_end_reason(run.end_reason);
        end && end->kind == contract::EndReason::Kind::Provider) {
      const agents::ProviderFailure f = agents::classify_provider_failure(end->detail, "");
      throw ExperimentError(error_cause(f.kind),
                            id.key() + ": the author session ended because " +
                                provider_failure_message(f) +
                                ": nothing to verify; retry it with `kdispatch run --resume`");
    }
    // A session the supervising person stopped has no candidate it stands behind.
    if (auto end = contract::parse_end_reason(run.end_reason);
        end && end->kind == contract::EndReason::Kind::Stopped) {
      throw Error(id.key() +
                  ": the supervising person stopped the author session (stopped_by_supervisor): "
                  "nothing to verify");
    }
    // The author phase's inventory, unless this verification names another.
    std::optional<fs::path> chips = o.chips;
    if (!chips && !run.chips.empty()) chips = fs::path(run.chips);
    briefs::BriefOutcome bo =
        briefs::build_brief({run.wiki, run.family, run.experiment, chips, {}});
    if (!bo.brief)
      throw Error("the experiment's pages no longer make a brief:\n" +
                  briefs::render_problems(bo.problems));
    verify::VerificationInput in;
    in.run_dir = run_dir;
    in.run = run;
    if (fs::is_regular_file(run_dir / "author/finish.json"))
      in.finish = read_object(run_dir / "author/finish.json", "finish record");
    in.brief = *bo.brief;
    in.mode = o.mode;
    in.verify_cmd = o.verify_cmd;
    in.tool_dirs = o.tool_dirs;
    in.prior = prior;
    // The key lives in the run root's state, which no box binds.
    in.signing_key = contract::load_or_create_signing_key(
        contract::signing_key_path(run_dir.parent_path().parent_path()));
    const verify::Recorder recorder = [&](const char* type, json data) {
      journal.append(type, id.key(), std::move(data));
    };
    const contract::ChipInventory inventory = contract::load_chip_inventory_or_default(chips);
    std::unique_ptr<ChipBackend> own_backend;
    ChipBackend* backend = o.chip_backend;
    if (!backend) backend = (own_backend = make_chip_backend(inventory)).get();
    ChipTask task;
    task.experiment = id.key();
    task.purpose = "verify";
    task.run_dir = run_dir;
    task.record = recorder;
    if (backend->is_slurm()) {
      // The author's last chip job names the chip to avoid; jobs an earlier process left in
      // flight are let finish before the verification remakes the files they read.
      for (const auto& r : journal.records()) {
        if (r.experiment != id.key() || r.type != rec::kJobFinished) continue;
        if (r.data.value("purpose", "") == "run_on_chip" && !r.data.value("chip", "").empty())
          task.avoid_chip = r.data.value("chip", "");
      }
      for (const auto& s : fold_journal(journal.records())) {
        if (s.experiment != id.key()) continue;
        for (const auto& [job_id, j] : s.jobs) {
          if (j.value("purpose", "") != "verify") continue;
          if (!j.contains("finished"))
            task.in_flight.push_back(j);
          else if (j["finished"].value("declined", false))
            task.declined.push_back(j);
        }
      }
      backend->settle(task.in_flight);
      in.environment = {{"scheduler", "slurm"},
                        {"partition", inventory.slurm->partition},
                        {"author_last_chip", task.avoid_chip}};
    } else {
      task.candidates = verifier_chips(inventory, run.author_chip, o.chip, o.busy_chips);
    }
    const verify::ChipRunner runner = [&](const verify::ChipJob& job,
                                          const std::function<void(const std::string&)>& on_start) {
      ChipTask t = task;
      t.job = job;
      return backend->run(t, on_start);
    };
    verify::Reviewer reviewer;
    if (o.verifier_model) reviewer = llm_reviewer(*o.verifier_model, in.brief, run_dir, run.wiki);
    verify::VerificationResult r = verify::run_verification(in, runner, recorder, reviewer);
    report.verdict = r.decision.verdict;
    report.reasons = r.decision.reasons;
    report.outcome = std::move(r.outcome);
  }
  if (o.file) verify::file_into_wiki(run.wiki, run.family, run.experiment, report.outcome);
  return report;
}

}  // namespace kd::dispatcher
