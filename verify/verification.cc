#include "verify/verification.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "common/agent_file.h"
#include "common/errors.h"
#include "common/files.h"
#include "common/sha256.h"
#include "common/time.h"
#include "contract/journal_records.h"
#include "contract/ledger.h"
#include "contract/receipt.h"
#include "contract/wiki_layout.h"
#include "git/reader.h"
#include "git/repo.h"
#include "sandbox/box_user.h"
#include "sandbox/env_scrub.h"
#include "sandbox/profile.h"
#include "verify/filing.h"
#include "verify/receipt_sections.h"
#include "verify/verify_command.h"

namespace kd::verify {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;
namespace journal = contract::journal;

std::string fmt_number(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

bool sha_matches(const std::string& short_sha, const std::string& full) {
  return short_sha.size() >= 7 && full.rfind(short_sha, 0) == 0;
}

// The author's paper trail: what caps a verdict at inconclusive.
void add_paper_trail(VerdictInputs& in, const json& finish, const briefs::Stub& stub,
                     const std::vector<git::CommitInfo>& commits) {
  contract::Ledger ledger = contract::parse_ledger(finish.value("ledger", ""));
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
  for (const auto& r : contract::parse_ledger(finish.value("ledger", "")).rows) {
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

class Verification {
 public:
  Verification(const VerificationInput& in, const ChipRunner& chips, const Recorder& record,
               const Reviewer& reviewer)
      : in_(in),
        chips_(chips),
        record_(record),
        reviewer_(reviewer),
        id_{in.run.family, in.run.experiment},
        artifact_dir_(in.run.wiki /
                      id_.artifact_dir(in.brief.binding.campaign_tag, contract::Role::Verifier)),
        receipt_(artifact_dir_ / "receipt.json"),
        receipt_rel_(fs::relative(receipt_, in.run.wiki).string()),
        snapshot_(in.run_dir / "verifier/snapshot") {}

  VerificationResult run() {
    const std::vector<git::CommitInfo> commits =
        git::branch_commits(in_.run.home_repo, in_.run.branch, in_.run.base_commit);
    VerdictInputs rules;
    rules.bar = in_.brief.stub.bar.value_or(0);
    rules.intervention_class = in_.brief.stub.intervention_class;
    // A verdict decided before anything is measured, and why.
    Decision early{contract::Verdict::Inconclusive, {}};
    if (!in_.finish) {
      early.reasons.push_back("the author session ended without a valid finish (" +
                              (in_.run.end_reason.empty() ? "unknown" : in_.run.end_reason) +
                              "): no final candidate to verify");
    } else {
      cand_ = final_candidate(commits, early.reasons);
      add_paper_trail(rules, *in_.finish, in_.brief.stub, commits);
    }
    if (early.reasons.empty()) {
      if (auto why = freeze()) {
        early.verdict = contract::Verdict::Invalid;
        early.reasons.push_back(*why);
      }
    }
    const bool measured = early.reasons.empty();
    if (measured) {
      measure();
      validate();
      if (check_.ok && reviewer_) review();
    }
    VerificationResult out;
    out.decision = measured ? decide_verdict(with_receipt(rules)) : early;
    out.outcome = outcome(out.decision, rules.bar, measured);
    out.outcome["filing"] = filing(out.decision, measured);
    write_file_atomic(in_.run_dir / "outcome.json", out.outcome.dump(2) + "\n");
    write_file_atomic(in_.run_dir / "filing.md",
                      filing_proposal(in_.brief.stub.path, id_.key(), out.outcome["filing"]));
    record_(journal::kVerdict, {{"verdict", contract::to_string(out.decision.verdict)},
                                {"reasons", out.decision.reasons},
                                {"sha", cand_.sha},
                                {"outcome", (in_.run_dir / "outcome.json").string()}});
    return out;
  }

 private:
  // The candidate the finish names; what keeps it from being verified goes to `problems`.
  Candidate final_candidate(const std::vector<git::CommitInfo>& commits,
                            std::vector<std::string>& problems) const {
    Candidate c;
    c.sha = in_.finish->value("/final_candidate/sha"_json_pointer, "");
    c.path = in_.finish->value("/final_candidate/path"_json_pointer, "");
    if (c.path.rfind("./", 0) == 0) c.path = c.path.substr(2);
    const auto& target = in_.brief.binding.target;
    if (std::none_of(commits.begin(), commits.end(),
                     [&](const git::CommitInfo& ci) { return ci.sha == c.sha; }))
      problems.push_back("the final candidate " + c.sha + " is not a commit of " + in_.run.branch);
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
    git::snapshot_commit(in_.run.home_repo, cand_.sha, snapshot_);
    const std::string& reference = in_.brief.binding.reference;
    git::Reader home(in_.run.home_repo);
    std::optional<std::string> base_ref = home.file_at(in_.run.base_commit, reference);
    std::optional<std::string> cand_ref = home.file_at(cand_.sha, reference);
    if (base_ref && base_ref == cand_ref) return std::nullopt;
    return "the final candidate commit changes the reference module " + reference +
           ": the oracle is not the pre-registered one";
  }

  // Runs the verify command in a verifier box on a chip of the pipeline's choosing, unless a
  // previous attempt already validated a receipt of this very candidate.
  void measure() {
    const bool have =
        in_.prior && in_.prior->value("sha", "") == cand_.sha &&
        agent_regular_file(receipt_.parent_path(), receipt_.filename()) &&
        contract::validate_receipt(receipt_).file_sha256 == in_.prior->value("sha256", "");
    if (have) {
      m_.chip = in_.prior->value("chip", "");
      return;
    }
    fs::remove_all(artifact_dir_);
    fs::create_directories(artifact_dir_);
    sandbox::hand_to_box_user(artifact_dir_);
    const fs::path scratch = in_.run_dir / "verifier/work";
    fs::remove_all(scratch);
    fs::create_directories(scratch);
    sandbox::hand_to_box_user(scratch);

    const briefs::Binding& bind = in_.brief.binding;
    const std::string tmpl = in_.verify_cmd                ? *in_.verify_cmd
                             : bind.verify_command.empty() ? std::string(kKgateTemplate)
                                                           : bind.verify_command;
    m_.argv = expand_verify_command(tmpl, {{"reference", (snapshot_ / bind.reference).string()},
                                           {"candidate", (snapshot_ / cand_.path).string()},
                                           {"mode", in_.mode},
                                           {"family", in_.run.family},
                                           {"bar", in_.brief.stub.bar_text},
                                           {"claim", author_claim(*in_.finish, cand_.sha)},
                                           {"artifact_dir", artifact_dir_.string()},
                                           {"receipt", receipt_.string()}});
    ChipJob job;
    job.spec.profile = sandbox::load_profile("verifier");
    job.spec.worktree = scratch;
    job.spec.ro = {snapshot_};
    for (const auto& d : in_.tool_dirs)
      job.spec.ro.push_back(fs::absolute(d));
    job.spec.rw_extra = {artifact_dir_};
    job.request.argv = m_.argv;
    job.request.cwd = snapshot_.string();
    job.request.env = sandbox::tool_env(in_.tool_dirs);
    job.request.use_chip = true;
    const ChipRun run = chips_(job, [&](const std::string& chip) {
      record_(journal::kVerifyStarted,
              {{"chip", chip}, {"sha", cand_.sha}, {"mode", in_.mode}, {"argv", m_.argv}});
    });
    m_.chip = run.chip;
    m_.result = run.result.to_json();
    write_file_atomic(in_.run_dir / "verifier/verify.log", "$ " + json(m_.argv).dump() + "\n" +
                                                               run.result.out + run.result.err +
                                                               "\n" + m_.result.dump(2) + "\n");
  }

  void validate() {
    check_ = contract::validate_receipt(receipt_);
    if (check_.ok)
      receipt_json_ = json::parse(read_agent_file(receipt_, kMaxAgentJsonBytes), nullptr, false);
    record_(journal::kReceiptValidated, {{"sha", cand_.sha},
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

  void review() {
    const briefs::Binding& bind = in_.brief.binding;
    review_ = reviewer_({snapshot_, snapshot_ / bind.reference, snapshot_ / cand_.path, receipt_,
                         artifact_dir_, receipt_rel_, m_.chip, in_.mode});
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

  json outcome(const Decision& d, double bar, bool measured) const {
    auto opt = [](const std::optional<double>& x) { return x ? json(*x) : json(); };
    return {{"experiment", id_.key()},
            {"verdict", contract::to_string(d.verdict)},
            {"reasons", d.reasons},
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
             {{"chip", m_.chip}, {"mode", in_.mode}, {"argv", m_.argv}, {"result", m_.result}}},
            {"transcript_heads",
             {{"author", in_.run.author_transcript_head},
              {"verifier", review_ ? review_->transcript_head : ""}}},
            {"llm_verifier", review_ ? review_->record : json()},
            {"author_end_reason", in_.run.end_reason},
            {"bar", bar}};
  }

  // The proposal `--file` applies: the sections for the page and the RESULTS.tsv row.
  json filing(const Decision& d, bool measured) const {
    FilingInput f;
    f.verdict = std::string(contract::to_string(d.verdict));
    f.reasons = d.reasons;
    f.receipt_path = measured ? receipt_rel_ : "(none)";
    f.receipt_sha256 = check_.file_sha256.empty() ? "-" : check_.file_sha256;
    f.ledger_markdown = in_.finish ? in_.finish->value("ledger", "") : "(no ledger: no finish)";
    f.final_candidate = in_.finish ? "`" + cand_.path + "` at " + cand_.sha + "\n\n" +
                                         in_.finish->value("mechanism", "")
                                   : "(none)";
    f.verifier_sections =
        review_ && review_->sections
            ? *review_->sections
            : receipt_sections({receipt_json_.is_object() ? &receipt_json_ : nullptr, &check_,
                                receipt_rel_, m_.chip, in_.mode});
    f.transcript_heads = {"author " + in_.run.author_transcript_head};
    if (review_ && !review_->transcript_head.empty())
      f.transcript_heads.push_back("verifier " + review_->transcript_head);
    const briefs::Stub& stub = in_.brief.stub;
    ResultsRow row{in_.run.experiment,
                   utc_now_rfc3339().substr(0, 10),
                   check_.p50_candidate_ms ? fmt_number(*check_.p50_candidate_ms) : "-",
                   check_.speedup ? fmt_number(*check_.speedup) : "-",
                   "-",
                   "-",
                   check_.parity_verdict.empty() ? "-" : check_.parity_verdict,
                   stub.intervention_class,
                   stub.activity,
                   f.verdict,
                   stub.hypothesis.substr(0, stub.hypothesis.find('\n'))};
    return {{"page", stub.path},
            {"results_tsv", (fs::path(in_.brief.binding.path).parent_path() / "RESULTS.tsv")},
            {"sections", filing_sections(f)},
            {"results_row", append_results_row("", row).substr(kResultsHeader.size() + 1)}};
  }

  const VerificationInput& in_;
  const ChipRunner& chips_;
  const Recorder& record_;
  const Reviewer& reviewer_;
  const contract::ExperimentId id_;
  const fs::path artifact_dir_, receipt_;
  const std::string receipt_rel_;
  const fs::path snapshot_;
  Candidate cand_;
  Measurement m_;
  contract::ReceiptCheck check_;
  json receipt_json_;  // the receipt, when valid
  std::optional<Review> review_;
};

}  // namespace

VerificationResult run_verification(const VerificationInput& input, const ChipRunner& chips,
                                    const Recorder& record, const Reviewer& reviewer) {
  return Verification(input, chips, record, reviewer).run();
}

}  // namespace kd::verify
