#include "dispatcher/verify_run.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <set>

#include "audit/contract.h"
#include "audit/receipt.h"
#include "briefs/brief.h"
#include "common/errors.h"
#include "common/files.h"
#include "common/sha256.h"
#include "dispatcher/box_user.h"
#include "dispatcher/campaign_state.h"
#include "dispatcher/chip_lock.h"
#include "dispatcher/filing.h"
#include "dispatcher/git_repo.h"
#include "dispatcher/llm_verifier.h"
#include "dispatcher/verdict.h"
#include "dispatcher/verifier_sections.h"
#include "dispatcher/verify_command.h"
#include "sandbox/box.h"
#include "sandbox/profile.h"

namespace kd::dispatcher {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

json read_object(const fs::path& p, const std::string& what) {
  json j = json::parse(read_file(p), nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw Error(what + " " + quote(p.string()) + " is not a JSON object");
  return j;
}

std::string fmt_number(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

bool sha_matches(const std::string& short_sha, const std::string& full) {
  return short_sha.size() >= 7 && full.rfind(short_sha, 0) == 0;
}

// What the run directory recorded of the author phase.
struct AuthorPhase {
  json run;
  std::optional<json> finish;
  fs::path wiki, home_repo;
  std::string family, experiment, branch, base;
};

AuthorPhase read_author_phase(const fs::path& run_dir) {
  AuthorPhase a;
  if (!fs::is_regular_file(run_dir / "run.json"))
    throw Error("no " + quote((run_dir / "run.json").string()) +
                ": the author phase of this run has not ended");
  a.run = read_object(run_dir / "run.json", "run record");
  if (fs::is_regular_file(run_dir / "author/finish.json"))
    a.finish = read_object(run_dir / "author/finish.json", "finish record");
  a.wiki = a.run.value("wiki", "");
  a.home_repo = a.run.value("home_repo", "");
  a.family = a.run.value("family", "");
  a.experiment = a.run.value("experiment", "");
  a.branch = a.run.value("branch", "");
  a.base = a.run.value("base_commit", a.run.value("integration_branch", ""));
  if (a.wiki.empty() || a.home_repo.empty() || a.family.empty() || a.branch.empty() ||
      a.base.empty())
    throw Error("run record " + quote((run_dir / "run.json").string()) + " is incomplete");
  return a;
}

// The author's paper trail: what caps a verdict at inconclusive.
void add_paper_trail(VerdictInputs& in, const json& finish, const briefs::Stub& stub,
                     const std::vector<git::CommitInfo>& commits) {
  audit::Ledger ledger = audit::parse_ledger(finish.value("ledger", ""));
  in.ledger_has_loaded_line = ledger.has_loaded_line;
  std::set<std::string> covered;
  for (const auto& r : ledger.rows)
    covered.insert(r.candidate);
  for (const auto& a : finish.value("abandoned", json::array()))
    covered.insert(a.value("candidate", ""));
  for (const auto& item : stub.plan) {
    if (!covered.count(item.id)) in.unrun_plan_items.push_back(item.id);
  }
  for (const auto& r : ledger.rows) {
    bool found = false;
    for (const auto& c : commits)
      found = found || sha_matches(r.sha, c.sha);
    if (!found) in.rows_without_commit.push_back(r.candidate + " (" + r.sha + ")");
  }
}

// The author's p50 for the final candidate, as claimed in its ledger ("nan" when none).
std::string author_claim(const json& finish, const std::string& final_sha) {
  for (const auto& r : audit::parse_ledger(finish.value("ledger", "")).rows) {
    if (!sha_matches(r.sha, final_sha)) continue;
    try {
      size_t used = 0;
      double v = std::stod(r.p50_ms, &used);
      if (used > 0) return fmt_number(v);
    } catch (const std::exception&) {
    }
  }
  return "nan";
}

struct Measurement {
  fs::path receipt;
  std::string chip;
  std::vector<std::string> argv;
  json result;  // the command's structured result
};

}  // namespace

std::vector<kd::Chip> verifier_chips(const kd::ChipInventory& inv, const std::string& author_chip,
                                     const std::optional<std::string>& requested,
                                     const std::vector<std::string>& busy) {
  if (requested) {
    const kd::Chip* c = inv.find(*requested);
    if (!c) throw Error("chip " + *requested + " is not in the inventory " + inv.source.string());
    return {*c};
  }
  const kd::Chip* own = inv.find(author_chip);
  const size_t n = inv.chips.size();
  const size_t first = own ? size_t(own - inv.chips.data()) + 1 : 0;
  std::vector<kd::Chip> out;
  for (size_t k = 0; k < n; ++k) {
    const kd::Chip& c = inv.chips[(first + k) % n];
    if (c.id != author_chip && (!own || c.kind == own->kind)) out.push_back(c);
  }
  std::stable_partition(out.begin(), out.end(), [&](const kd::Chip& c) {
    return std::find(busy.begin(), busy.end(), c.id) == busy.end();
  });
  if (out.empty() && own) out.push_back(*own);
  if (out.empty())
    throw Error("the inventory " + inv.source.string() + " has no chip to verify on");
  return out;
}

VerifyReport run_verify(const VerifyOptions& o) {
  const fs::path run_dir = fs::absolute(o.run_dir);
  AuthorPhase a = read_author_phase(run_dir);
  const std::string key = a.family + "/" + a.experiment;
  JournalSet own_journals;
  Journal* journal = &(o.journals ? o.journals : &own_journals)->at(run_dir.parent_path());

  VerifyReport report;
  report.experiment = key;
  report.outcome_path = run_dir / "outcome.json";
  std::optional<json> prior;  // this experiment's state in the journal
  for (const auto& s : fold_journal(journal->records())) {
    if (s.experiment != key) continue;
    if (!s.verdict.empty() && fs::is_regular_file(report.outcome_path)) {
      report.reused = true;
      report.outcome = read_object(report.outcome_path, "outcome");
      report.verdict = report.outcome.value("verdict", "");
      report.reasons = report.outcome.value("reasons", std::vector<std::string>{});
    }
    if (!s.receipt.is_null()) prior = s.receipt;
  }
  if (report.reused && !o.file) return report;

  // The author phase's inventory, unless this verification names another.
  std::optional<fs::path> chips = o.chips;
  if (std::string recorded = a.run.value("chips", ""); !chips && !recorded.empty())
    chips = fs::path(recorded);

  if (!report.reused) {
    FilingInput filing;
    briefs::BriefOutcome bo = briefs::build_brief({a.wiki, a.family, a.experiment, chips, {}});
    if (!bo.brief)
      throw Error("the experiment's pages no longer make a brief:\n" +
                  briefs::render_problems(bo.problems));
    const briefs::Brief& brief = *bo.brief;
    const briefs::Binding& bind = brief.binding;
    const fs::path artifact_dir =
        a.wiki / "raw/profiles" / bind.campaign_tag / (a.family + "-" + a.experiment) / "verifier";
    const fs::path receipt = artifact_dir / "receipt.json";
    const std::string receipt_rel = fs::relative(receipt, a.wiki).string();

    VerdictInputs in;
    in.bar = brief.stub.bar.value_or(0);
    in.intervention_class = brief.stub.intervention_class;
    std::vector<std::string> early;  // a verdict decided before anything is measured
    std::string early_verdict = "inconclusive";
    std::string final_sha, final_path;
    Measurement m;
    m.receipt = receipt;
    std::vector<git::CommitInfo> commits = git::branch_commits(a.home_repo, a.branch, a.base);
    if (!a.finish) {
      early.push_back("the author session ended without a valid finish (" +
                      a.run.value("end_reason", std::string("unknown")) +
                      "): no final candidate to verify");
    } else {
      final_sha = a.finish->value("/final_candidate/sha"_json_pointer, "");
      final_path = a.finish->value("/final_candidate/path"_json_pointer, "");
      if (final_path.rfind("./", 0) == 0) final_path = final_path.substr(2);
      bool on_branch = false;
      for (const auto& c : commits)
        on_branch = on_branch || c.sha == final_sha;
      bool shipped = false;
      for (const auto& t : bind.target)
        shipped = shipped || t == final_path;
      if (!on_branch)
        early.push_back("the final candidate " + final_sha + " is not a commit of " + a.branch);
      if (!shipped)
        early.push_back("the final candidate path " + final_path +
                        " is not a ship path of the family binding");
      add_paper_trail(in, *a.finish, brief.stub, commits);
    }

    fs::path snapshot = run_dir / "verifier/snapshot";
    json llm;  // the LLM verifier's session, when one ran
    std::optional<std::string> llm_sections;
    if (early.empty()) {
      // A snapshot is derived from the commit: a crashed attempt's copy is simply made again.
      fs::remove_all(snapshot);
      fs::create_directories(snapshot.parent_path());
      git::snapshot_commit(a.home_repo, final_sha, snapshot);
      std::optional<std::string> base_ref = git::file_at(a.home_repo, a.base, bind.reference);
      std::optional<std::string> cand_ref = git::file_at(a.home_repo, final_sha, bind.reference);
      if (!base_ref || base_ref != cand_ref) {
        early_verdict = "invalid";
        early.push_back("the final candidate commit changes the reference module " +
                        bind.reference + ": the oracle is not the pre-registered one");
      }
    }

    audit::ReceiptCheck check;
    json receipt_json;
    if (early.empty()) {
      // A receipt a previous attempt validated for this very candidate is not measured again.
      bool have = prior && prior->value("sha", "") == final_sha && fs::is_regular_file(receipt) &&
                  sha256_file_hex(receipt) == prior->value("sha256", "");
      if (!have) {
        fs::remove_all(artifact_dir);
        fs::create_directories(artifact_dir);
        hand_to_box_user(artifact_dir);
        fs::path scratch = run_dir / "verifier/work";
        fs::remove_all(scratch);
        fs::create_directories(scratch);
        hand_to_box_user(scratch);

        std::string tmpl = o.verify_cmd                  ? *o.verify_cmd
                           : bind.verify_command.empty() ? std::string(kKgateTemplate)
                                                         : bind.verify_command;
        m.argv = expand_verify_command(tmpl, {{"reference", (snapshot / bind.reference).string()},
                                              {"candidate", (snapshot / final_path).string()},
                                              {"mode", o.mode},
                                              {"family", a.family},
                                              {"bar", brief.stub.bar_text},
                                              {"claim", author_claim(*a.finish, final_sha)},
                                              {"artifact_dir", artifact_dir.string()},
                                              {"receipt", receipt.string()}});
        auto inv = load_chip_inventory_or_default(chips);
        std::vector<kd::Chip> candidates =
            verifier_chips(inv, a.run.value("author_chip", ""), o.chip, o.busy_chips);
        auto [lock, which] = *ChipLock::wait_any(candidates, std::nullopt, [&] {
          std::string ids;
          for (const auto& c : candidates)
            ids += (ids.empty() ? "" : ", ") + c.id + " (" + c.lock.string() + ")";
          std::fprintf(stderr, "kdispatch verify: waiting for a chip lock: %s\n", ids.c_str());
        });
        const kd::Chip& chip = candidates[which];
        m.chip = chip.id;
        journal->append(
            rec::kVerifyStarted, key,
            {{"chip", chip.id}, {"sha", final_sha}, {"mode", o.mode}, {"argv", m.argv}});
        sandbox::BoxSpec spec;
        spec.profile = sandbox::load_profile("verifier");
        spec.worktree = scratch;
        spec.ro = {snapshot};
        for (const auto& d : o.tool_dirs)
          spec.ro.push_back(fs::absolute(d));
        spec.rw_extra = {artifact_dir};
        spec.chip = chip;
        std::unique_ptr<sandbox::Box> box = sandbox::Box::open(spec);
        sandbox::RunRequest req;
        req.argv = m.argv;
        req.cwd = snapshot.string();
        req.env = tool_env(o.tool_dirs);
        req.use_chip = true;
        sandbox::RunResult rr = box->run(req);
        box.reset();
        m.result = rr.to_json();
        write_file_atomic(
            run_dir / "verifier/verify.log",
            "$ " + json(m.argv).dump() + "\n" + rr.out + rr.err + "\n" + m.result.dump(2) + "\n");
      } else {
        m.chip = prior->value("chip", "");
      }
      check = audit::validate_receipt(receipt);
      if (check.ok) receipt_json = json::parse(read_file(receipt), nullptr, false);
      json problems = check.problems;
      journal->append(rec::kReceiptValidated, key,
                      {{"sha", final_sha},
                       {"chip", m.chip},
                       {"receipt", receipt_rel},
                       {"sha256", check.file_sha256},
                       {"ok", check.ok},
                       {"verdict", check.verdict},
                       {"problems", problems}});
      if (check.ok && check.cmd != "verify") {
        check.ok = false;
        check.problems.push_back("a " + check.cmd + " receipt is not a verification");
      }
      if (check.ok && o.verifier_model) {
        kd::Chip chip{m.chip, "", "", {}, {}};
        briefs::VerifierBriefOutcome vb = briefs::make_verifier_brief(
            brief, {a.wiki, snapshot / bind.reference, snapshot / final_path, chip, artifact_dir,
                    o.mode, std::nullopt});
        if (!vb.brief) {
          llm = {{"error", briefs::render_problems(vb.problems)}};
        } else {
          LlmVerifierResult r = run_llm_verifier(
              {*o.verifier_model, *vb.brief, run_dir, snapshot, receipt, receipt_rel, chip});
          llm = {{"end_reason", r.end_reason},
                 {"transcript_head", r.transcript_head},
                 {"accepted", r.sections.has_value()}};
          llm_sections = r.sections;
        }
      }
    }

    Verdict v;
    if (!early.empty()) {
      v.verdict = early_verdict;
      v.reasons = early;
    } else {
      in.receipt_valid = check.ok;
      in.receipt_problems = check.problems;
      in.receipt_verdict = check.verdict;
      in.mode = check.mode;
      in.parity_verdict = check.parity_verdict;
      in.measure_gate = check.gates.count("measure") ? check.gates.at("measure") : false;
      in.firing_gate = check.gates.count("firing") ? check.gates.at("firing") : false;
      in.custom_call_count = check.custom_call_count.value_or(0);
      in.speedup = check.speedup.value_or(0);
      v = decide_verdict(in);
    }

    report.verdict = v.verdict;
    report.reasons = v.reasons;
    report.outcome = {
        {"experiment", key},
        {"verdict", v.verdict},
        {"reasons", v.reasons},
        {"final_candidate", {{"path", final_path}, {"sha", final_sha}}},
        {"receipt",
         {{"path", early.empty() ? receipt_rel : ""},
          {"sha256", check.file_sha256},
          {"ok", check.ok},
          {"problems", check.problems},
          {"verdict", check.verdict},
          {"speedup", check.speedup ? json(*check.speedup) : json()},
          {"p50_ms",
           {{"baseline", check.p50_baseline_ms ? json(*check.p50_baseline_ms) : json()},
            {"candidate", check.p50_candidate_ms ? json(*check.p50_candidate_ms) : json()}}}}},
        {"verifier", {{"chip", m.chip}, {"mode", o.mode}, {"argv", m.argv}, {"result", m.result}}},
        {"transcript_heads",
         {{"author", a.run.value("author_transcript_head", "")},
          {"verifier", llm.is_object() ? llm.value("transcript_head", "") : ""}}},
        {"llm_verifier", llm},
        {"author_end_reason", a.run.value("end_reason", "")},
        {"bar", in.bar}};

    filing.verdict = v.verdict;
    filing.reasons = v.reasons;
    filing.receipt_path = early.empty() ? receipt_rel : "(none)";
    filing.receipt_sha256 = check.file_sha256.empty() ? "-" : check.file_sha256;
    filing.ledger_markdown = a.finish ? a.finish->value("ledger", "") : "(no ledger: no finish)";
    filing.final_candidate = a.finish ? "`" + final_path + "` at " + final_sha + "\n\n" +
                                            a.finish->value("mechanism", "")
                                      : "(none)";
    filing.verifier_sections =
        llm_sections ? *llm_sections
                     : receipt_sections({receipt_json.is_object() ? &receipt_json : nullptr, &check,
                                         receipt_rel, m.chip, o.mode});
    filing.transcript_heads = {"author " + a.run.value("author_transcript_head", "")};
    if (llm.is_object() && !llm.value("transcript_head", "").empty())
      filing.transcript_heads.push_back("verifier " + llm.value("transcript_head", ""));
    ResultsRow row{a.experiment,
                   utc_now().substr(0, 10),
                   check.p50_candidate_ms ? fmt_number(*check.p50_candidate_ms) : "-",
                   check.speedup ? fmt_number(*check.speedup) : "-",
                   "-",
                   "-",
                   check.parity_verdict.empty() ? "-" : check.parity_verdict,
                   brief.stub.intervention_class,
                   brief.stub.activity,
                   v.verdict,
                   brief.stub.hypothesis.substr(0, brief.stub.hypothesis.find('\n'))};
    report.outcome["filing"] = {
        {"page", brief.stub.path},
        {"results_tsv", fs::path(brief.binding.path).parent_path() / "RESULTS.tsv"},
        {"sections", filing_sections(filing)},
        {"results_row", append_results_row("", row).substr(kResultsHeader.size() + 1)}};
    write_file_atomic(report.outcome_path, report.outcome.dump(2) + "\n");
    write_file_atomic(run_dir / "filing.md",
                      "# Filing proposal: " + key + "\n\nPage: " + brief.stub.path + "\n\n" +
                          report.outcome["filing"]["sections"].get<std::string>() +
                          "\n## RESULTS.tsv row\n\n```\n" +
                          report.outcome["filing"]["results_row"].get<std::string>() + "```\n");
    journal->append(rec::kVerdict, key,
                    {{"verdict", v.verdict},
                     {"reasons", v.reasons},
                     {"sha", final_sha},
                     {"outcome", report.outcome_path.string()}});
  }

  if (o.file) {
    const json& f = report.outcome.at("filing");
    std::string page_rel = f.value("page", ""), tsv_rel = f.value("results_tsv", "");
    std::string page = read_file(a.wiki / page_rel);
    // The proposal's sections are pasted as they were proposed, byte for byte.
    std::string receipt_path = report.outcome.value("/receipt/path"_json_pointer, "");
    std::string filed =
        file_page(page, report.verdict, receipt_path.empty() ? "(none)" : receipt_path,
                  f.value("sections", ""));
    std::string tsv;
    if (fs::exists(a.wiki / tsv_rel)) tsv = read_file(a.wiki / tsv_rel);
    if (tsv.empty()) tsv = std::string(kResultsHeader) + "\n";
    tsv += f.value("results_row", "");
    write_file_atomic(a.wiki / page_rel, filed);
    write_file_atomic(a.wiki / tsv_rel, tsv);
    git::commit_files(a.wiki, {page_rel, tsv_rel},
                      "file " + a.family + " " + a.experiment + ": " + report.verdict);
  }
  return report;
}

}  // namespace kd::dispatcher
