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

// The final candidate as the finish names it.
struct Candidate {
  std::string sha, path;
};

struct Measurement {
  std::string chip;
  std::vector<std::string> argv;
  json result;  // the command's structured result
};

// One verification of an ended author phase, phase by phase (DESIGN §8): the candidate the
// finish names, its frozen snapshot, the measurement in the verifier's box on a locked chip,
// the receipt's check, the optional LLM verifier, then the verdict by the rules with its outcome
// and filing proposal.
class Verification {
 public:
  Verification(const VerifyOptions& o, const fs::path& run_dir, const AuthorPhase& a,
               Journal& journal, const briefs::Brief& brief, std::optional<fs::path> chips,
               std::optional<json> prior)
      : o_(o),
        run_dir_(run_dir),
        a_(a),
        journal_(journal),
        brief_(brief),
        chips_(std::move(chips)),
        prior_(std::move(prior)),
        key_(a.family + "/" + a.experiment),
        artifact_dir_(a.wiki / "raw/profiles" / brief.binding.campaign_tag /
                      (a.family + "-" + a.experiment) / "verifier"),
        receipt_(artifact_dir_ / "receipt.json"),
        receipt_rel_(fs::relative(receipt_, a.wiki).string()),
        snapshot_(run_dir / "verifier/snapshot") {}

  void decide(VerifyReport& report) {
    const std::vector<git::CommitInfo> commits =
        git::branch_commits(a_.home_repo, a_.branch, a_.base);
    VerdictInputs in;
    in.bar = brief_.stub.bar.value_or(0);
    in.intervention_class = brief_.stub.intervention_class;
    // A verdict decided before anything is measured, and why.
    Verdict early{"inconclusive", {}};
    if (!a_.finish) {
      early.reasons.push_back("the author session ended without a valid finish (" +
                              a_.run.value("end_reason", std::string("unknown")) +
                              "): no final candidate to verify");
    } else {
      cand_ = final_candidate(commits, early.reasons);
      add_paper_trail(in, *a_.finish, brief_.stub, commits);
    }
    if (early.reasons.empty()) {
      if (auto why = freeze()) {
        early.verdict = "invalid";
        early.reasons.push_back(*why);
      }
    }
    if (early.reasons.empty()) {
      measure();
      validate();
      if (check_.ok && o_.verifier_model) run_llm();
    }
    const Verdict v = early.reasons.empty() ? decide_verdict(with_receipt(in)) : early;
    const bool measured = early.reasons.empty();
    report.verdict = v.verdict;
    report.reasons = v.reasons;
    report.outcome = outcome(v, in.bar, measured);
    report.outcome["filing"] = filing(v, measured);
    write_file_atomic(report.outcome_path, report.outcome.dump(2) + "\n");
    write_file_atomic(run_dir_ / "filing.md",
                      "# Filing proposal: " + key_ + "\n\nPage: " + brief_.stub.path + "\n\n" +
                          report.outcome["filing"]["sections"].get<std::string>() +
                          "\n## RESULTS.tsv row\n\n```\n" +
                          report.outcome["filing"]["results_row"].get<std::string>() + "```\n");
    journal_.append(rec::kVerdict, key_,
                    {{"verdict", v.verdict},
                     {"reasons", v.reasons},
                     {"sha", cand_.sha},
                     {"outcome", report.outcome_path.string()}});
  }

 private:
  // The candidate the finish names; what keeps it from being verified goes to `problems`.
  Candidate final_candidate(const std::vector<git::CommitInfo>& commits,
                            std::vector<std::string>& problems) const {
    Candidate c;
    c.sha = a_.finish->value("/final_candidate/sha"_json_pointer, "");
    c.path = a_.finish->value("/final_candidate/path"_json_pointer, "");
    if (c.path.rfind("./", 0) == 0) c.path = c.path.substr(2);
    const auto& target = brief_.binding.target;
    if (std::none_of(commits.begin(), commits.end(),
                     [&](const git::CommitInfo& ci) { return ci.sha == c.sha; }))
      problems.push_back("the final candidate " + c.sha + " is not a commit of " + a_.branch);
    if (std::find(target.begin(), target.end(), c.path) == target.end())
      problems.push_back("the final candidate path " + c.path +
                         " is not a ship path of the family binding");
    return c;
  }

  // Freezes the candidate commit. Returns why it is invalid: it changes the reference module.
  std::optional<std::string> freeze() const {
    // A snapshot is derived from the commit: a crashed attempt's copy is simply made again.
    fs::remove_all(snapshot_);
    fs::create_directories(snapshot_.parent_path());
    git::snapshot_commit(a_.home_repo, cand_.sha, snapshot_);
    const std::string& reference = brief_.binding.reference;
    std::optional<std::string> base_ref = git::file_at(a_.home_repo, a_.base, reference);
    std::optional<std::string> cand_ref = git::file_at(a_.home_repo, cand_.sha, reference);
    if (base_ref && base_ref == cand_ref) return std::nullopt;
    return "the final candidate commit changes the reference module " + reference +
           ": the oracle is not the pre-registered one";
  }

  // Runs the verify command in a verifier box on a locked chip, unless a previous attempt
  // already validated a receipt of this very candidate.
  void measure() {
    const bool have = prior_ && prior_->value("sha", "") == cand_.sha &&
                      fs::is_regular_file(receipt_) &&
                      sha256_file_hex(receipt_) == prior_->value("sha256", "");
    if (have) {
      m_.chip = prior_->value("chip", "");
      return;
    }
    fs::remove_all(artifact_dir_);
    fs::create_directories(artifact_dir_);
    hand_to_box_user(artifact_dir_);
    const fs::path scratch = run_dir_ / "verifier/work";
    fs::remove_all(scratch);
    fs::create_directories(scratch);
    hand_to_box_user(scratch);

    const briefs::Binding& bind = brief_.binding;
    const std::string tmpl = o_.verify_cmd                 ? *o_.verify_cmd
                             : bind.verify_command.empty() ? std::string(kKgateTemplate)
                                                           : bind.verify_command;
    m_.argv = expand_verify_command(tmpl, {{"reference", (snapshot_ / bind.reference).string()},
                                           {"candidate", (snapshot_ / cand_.path).string()},
                                           {"mode", o_.mode},
                                           {"family", a_.family},
                                           {"bar", brief_.stub.bar_text},
                                           {"claim", author_claim(*a_.finish, cand_.sha)},
                                           {"artifact_dir", artifact_dir_.string()},
                                           {"receipt", receipt_.string()}});
    const std::vector<kd::Chip> candidates =
        verifier_chips(load_chip_inventory_or_default(chips_), a_.run.value("author_chip", ""),
                       o_.chip, o_.busy_chips);
    auto [lock, which] = *ChipLock::wait_any(candidates, std::nullopt, [&] {
      std::string ids;
      for (const auto& c : candidates)
        ids += (ids.empty() ? "" : ", ") + c.id + " (" + c.lock.string() + ")";
      std::fprintf(stderr, "kdispatch verify: waiting for a chip lock: %s\n", ids.c_str());
    });
    const kd::Chip& chip = candidates[which];
    m_.chip = chip.id;
    journal_.append(rec::kVerifyStarted, key_,
                    {{"chip", chip.id}, {"sha", cand_.sha}, {"mode", o_.mode}, {"argv", m_.argv}});
    sandbox::BoxSpec spec;
    spec.profile = sandbox::load_profile("verifier");
    spec.worktree = scratch;
    spec.ro = {snapshot_};
    for (const auto& d : o_.tool_dirs)
      spec.ro.push_back(fs::absolute(d));
    spec.rw_extra = {artifact_dir_};
    spec.chip = chip;
    sandbox::RunRequest req;
    req.argv = m_.argv;
    req.cwd = snapshot_.string();
    req.env = tool_env(o_.tool_dirs);
    req.use_chip = true;
    const sandbox::RunResult rr = sandbox::Box::open(spec)->run(req);
    m_.result = rr.to_json();
    write_file_atomic(
        run_dir_ / "verifier/verify.log",
        "$ " + json(m_.argv).dump() + "\n" + rr.out + rr.err + "\n" + m_.result.dump(2) + "\n");
  }

  void validate() {
    check_ = audit::validate_receipt(receipt_);
    if (check_.ok) receipt_json_ = json::parse(read_file(receipt_), nullptr, false);
    journal_.append(rec::kReceiptValidated, key_,
                    {{"sha", cand_.sha},
                     {"chip", m_.chip},
                     {"receipt", receipt_rel_},
                     {"sha256", check_.file_sha256},
                     {"ok", check_.ok},
                     {"verdict", check_.verdict},
                     {"problems", check_.problems}});
    if (check_.ok && check_.cmd != "verify") {
      check_.ok = false;
      check_.problems.push_back("a " + check_.cmd + " receipt is not a verification");
    }
  }

  // The LLM verifier reads the verifier brief and the receipt; its sections replace the ones
  // written from the receipt once they pass the checks. The verdict stays the rules'.
  void run_llm() {
    kd::Chip chip{m_.chip, "", "", {}, {}};
    briefs::VerifierBriefOutcome vb = briefs::make_verifier_brief(
        brief_, {a_.wiki, snapshot_ / brief_.binding.reference, snapshot_ / cand_.path, chip,
                 artifact_dir_, o_.mode, std::nullopt});
    if (!vb.brief) {
      llm_ = {{"error", briefs::render_problems(vb.problems)}};
      return;
    }
    LlmVerifierResult r = run_llm_verifier(
        {*o_.verifier_model, *vb.brief, run_dir_, snapshot_, receipt_, receipt_rel_, chip});
    llm_ = {{"end_reason", r.end_reason},
            {"transcript_head", r.transcript_head},
            {"accepted", r.sections.has_value()}};
    llm_sections_ = r.sections;
  }

  VerdictInputs with_receipt(VerdictInputs in) const {
    in.receipt_valid = check_.ok;
    in.receipt_problems = check_.problems;
    in.receipt_verdict = check_.verdict;
    in.mode = check_.mode;
    in.parity_verdict = check_.parity_verdict;
    in.measure_gate = check_.gates.count("measure") ? check_.gates.at("measure") : false;
    in.firing_gate = check_.gates.count("firing") ? check_.gates.at("firing") : false;
    in.custom_call_count = check_.custom_call_count.value_or(0);
    in.speedup = check_.speedup.value_or(0);
    return in;
  }

  std::string llm_head() const { return llm_.is_object() ? llm_.value("transcript_head", "") : ""; }

  json outcome(const Verdict& v, double bar, bool measured) const {
    auto opt = [](const std::optional<double>& x) { return x ? json(*x) : json(); };
    return {{"experiment", key_},
            {"verdict", v.verdict},
            {"reasons", v.reasons},
            {"final_candidate", {{"path", cand_.path}, {"sha", cand_.sha}}},
            {"receipt",
             {{"path", measured ? receipt_rel_ : ""},
              {"sha256", check_.file_sha256},
              {"ok", check_.ok},
              {"problems", check_.problems},
              {"verdict", check_.verdict},
              {"speedup", opt(check_.speedup)},
              {"p50_ms",
               {{"baseline", opt(check_.p50_baseline_ms)},
                {"candidate", opt(check_.p50_candidate_ms)}}}}},
            {"verifier",
             {{"chip", m_.chip}, {"mode", o_.mode}, {"argv", m_.argv}, {"result", m_.result}}},
            {"transcript_heads",
             {{"author", a_.run.value("author_transcript_head", "")}, {"verifier", llm_head()}}},
            {"llm_verifier", llm_},
            {"author_end_reason", a_.run.value("end_reason", "")},
            {"bar", bar}};
  }

  // The proposal `--file` applies: the sections for the page and the RESULTS.tsv row.
  json filing(const Verdict& v, bool measured) const {
    FilingInput f;
    f.verdict = v.verdict;
    f.reasons = v.reasons;
    f.receipt_path = measured ? receipt_rel_ : "(none)";
    f.receipt_sha256 = check_.file_sha256.empty() ? "-" : check_.file_sha256;
    f.ledger_markdown = a_.finish ? a_.finish->value("ledger", "") : "(no ledger: no finish)";
    f.final_candidate = a_.finish ? "`" + cand_.path + "` at " + cand_.sha + "\n\n" +
                                        a_.finish->value("mechanism", "")
                                  : "(none)";
    f.verifier_sections =
        llm_sections_ ? *llm_sections_
                      : receipt_sections({receipt_json_.is_object() ? &receipt_json_ : nullptr,
                                          &check_, receipt_rel_, m_.chip, o_.mode});
    f.transcript_heads = {"author " + a_.run.value("author_transcript_head", "")};
    if (!llm_head().empty()) f.transcript_heads.push_back("verifier " + llm_head());
    const briefs::Stub& stub = brief_.stub;
    ResultsRow row{a_.experiment,
                   utc_now().substr(0, 10),
                   check_.p50_candidate_ms ? fmt_number(*check_.p50_candidate_ms) : "-",
                   check_.speedup ? fmt_number(*check_.speedup) : "-",
                   "-",
                   "-",
                   check_.parity_verdict.empty() ? "-" : check_.parity_verdict,
                   stub.intervention_class,
                   stub.activity,
                   v.verdict,
                   stub.hypothesis.substr(0, stub.hypothesis.find('\n'))};
    return {{"page", stub.path},
            {"results_tsv", fs::path(brief_.binding.path).parent_path() / "RESULTS.tsv"},
            {"sections", filing_sections(f)},
            {"results_row", append_results_row("", row).substr(kResultsHeader.size() + 1)}};
  }

  const VerifyOptions& o_;
  const fs::path run_dir_;
  const AuthorPhase& a_;
  Journal& journal_;
  const briefs::Brief& brief_;
  const std::optional<fs::path> chips_;
  const std::optional<json> prior_;  // the receipt record a previous attempt validated
  const std::string key_;
  const fs::path artifact_dir_, receipt_;
  const std::string receipt_rel_;
  const fs::path snapshot_;
  Candidate cand_;
  Measurement m_;
  audit::ReceiptCheck check_;
  json receipt_json_;  // the receipt, when valid
  json llm_;           // the LLM verifier's session, when one ran
  std::optional<std::string> llm_sections_;
};

// Applies the filing proposal: appends the sections to the experiment page, flips its status
// and adds the RESULTS.tsv row, committed in the wiki. Pre-registered text is never touched.
void file_into_wiki(const AuthorPhase& a, const VerifyReport& report) {
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
  Journal& journal = (o.journals ? o.journals : &own_journals)->at(run_dir.parent_path());

  VerifyReport report;
  report.experiment = key;
  report.outcome_path = run_dir / "outcome.json";
  std::optional<json> prior;  // the receipt record a previous attempt validated
  for (const auto& s : fold_journal(journal.records())) {
    if (s.experiment != key) continue;
    if (!s.verdict.empty() && fs::is_regular_file(report.outcome_path)) {
      report.reused = true;
      report.outcome = read_object(report.outcome_path, "outcome");
      report.verdict = report.outcome.value("verdict", "");
      report.reasons = report.outcome.value("reasons", std::vector<std::string>{});
    }
    if (!s.receipt.is_null()) prior = s.receipt;
  }
  if (!report.reused) {
    // The author phase's inventory, unless this verification names another.
    std::optional<fs::path> chips = o.chips;
    if (std::string recorded = a.run.value("chips", ""); !chips && !recorded.empty())
      chips = fs::path(recorded);
    briefs::BriefOutcome bo = briefs::build_brief({a.wiki, a.family, a.experiment, chips, {}});
    if (!bo.brief)
      throw Error("the experiment's pages no longer make a brief:\n" +
                  briefs::render_problems(bo.problems));
    Verification(o, run_dir, a, journal, *bo.brief, chips, prior).decide(report);
  }
  if (o.file) file_into_wiki(a, report);
  return report;
}

}  // namespace kd::dispatcher
