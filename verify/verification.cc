#include "verify/verification.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "audit/candidate_scan.h"
#include "common/agent_file.h"
#include "common/errors.h"
#include "common/files.h"
#include "common/glob.h"
#include "common/policy_path.h"
#include "common/sha256.h"
#include "common/time.h"
#include "contract/experiment_error.h"
#include "contract/journal_records.h"
#include "contract/ledger.h"
#include "contract/receipt.h"
#include "contract/receipt_signature.h"
#include "contract/wiki_layout.h"
#include "git/reader.h"
#include "git/repo.h"
#include "sandbox/box_user.h"
#include "sandbox/env_scrub.h"
#include "sandbox/profile.h"
#include "verify/filing.h"
#include "verify/measuring_parent.h"
#include "verify/parent_receipt.h"
#include "verify/receipt_sections.h"
#include "verify/verify_command.h"
#include "verify/worker_process.h"

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

// Removes from `tree` (a snapshot of the home repository, `home_rel` beneath the wiki) every file
// a no-peek glob names, whether the glob is written wiki-relative or home-relative. Returns the
// home-relative paths removed.
std::vector<std::string> drop_no_peek(const fs::path& tree, const std::string& home_rel,
                                      const std::vector<std::string>& globs) {
  std::vector<std::string> gone;
  std::vector<fs::path> files;
  for (auto it = fs::recursive_directory_iterator(tree); it != fs::recursive_directory_iterator();
       ++it)
    if (!it->is_directory()) files.push_back(it->path());
  for (const auto& f : files) {
    const std::string rel = fs::relative(f, tree).generic_string();
    const std::string wiki_rel = home_rel + "/" + rel;
    for (const auto& g : globs) {
      if (path_glob_match(g, wiki_rel) || path_glob_match(g, rel)) {
        fs::remove(f);
        gone.push_back(rel);
        break;
      }
    }
  }
  return gone;
}

// How far an external tool's speedup may stray from the parent's before they disagree: the
// parent's own spread, never less than a quarter.
double cross_check_tolerance(const ParentMeasurement& m) {
  const double spread = m.speedup > 0 ? (m.speedup_high - m.speedup_low) / m.speedup : 0;
  return std::max(0.25, spread);
}

// The final candidate as the finish names it.
struct Candidate {
  std::string sha, path;
};

struct Measurement {
  std::string chip;
  std::vector<std::string> argv;
  json result;  // the command's structured result
  // Which path produced the receipt: "kdispatch" (the measuring parent) or "external" (a verify
  // tool, cross-checked by the parent).
  std::string path;
  std::optional<ParentMeasurement> parent;  // the parent's own run (either path)
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
        snapshot_(in.run_dir / "verifier/snapshot"),
        reference_tree_(in.run_dir / "verifier/reference-tree"),
        candidate_tree_(in.run_dir / "verifier/candidate-tree") {}

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
    if (!in_.environment.is_null()) out.outcome["environment"] = environment();
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

  // Freezes the candidate commit into what each box may see: the snapshot (for an external
  // tool), the candidate's tree (its files without the reference or any no-peek path) and the
  // reference's tree (the base commit, the pre-registered oracle). Returns why the candidate is
  // invalid: it changes the reference module, or its ship path is not a regular file.
  std::optional<std::string> freeze() {
    const std::string& reference = in_.brief.binding.reference;
    git::Reader home(in_.run.home_repo);
    std::optional<std::string> base_ref = home.file_at(in_.run.base_commit, reference);
    std::optional<std::string> cand_ref = home.file_at(cand_.sha, reference);
    if (!base_ref || base_ref != cand_ref)
      return "the final candidate commit changes the reference module " + reference +
             ": the oracle is not the pre-registered one";
    // A link would let the measured file be anything the link reaches (a no-peek solution).
    std::optional<git::TreeEntry> ship = git::CommitTree(home, cand_.sha).entry(cand_.path);
    if (!ship || ship->mode != 0100644) {
      char mode[16];
      std::snprintf(mode, sizeof mode, "%o", ship ? ship->mode : 0u);
      return "the ship path " + cand_.path + " is " +
             (!ship             ? std::string("absent from the candidate commit")
              : ship->is_link() ? "a symbolic link (mode 120000) in the candidate commit"
                                : "of mode " + std::string(mode) + " in the candidate commit") +
             ": it must be a regular file (mode 100644)";
    }
    // Snapshots are derived from commits: a crashed attempt's copies are simply made again.
    const std::string home_rel = fs::relative(in_.run.home_repo, in_.run.wiki).generic_string();
    const auto& no_peek = in_.brief.binding.no_peek;
    for (const auto& dir : {snapshot_, reference_tree_, candidate_tree_})
      fs::remove_all(dir);
    fs::create_directories(snapshot_.parent_path());
    git::snapshot_commit(in_.run.home_repo, cand_.sha, snapshot_);
    hidden_ = drop_no_peek(snapshot_, home_rel, no_peek);
    git::snapshot_commit(in_.run.home_repo, cand_.sha, candidate_tree_);
    drop_no_peek(candidate_tree_, home_rel, no_peek);
    fs::remove(candidate_tree_ / reference);
    git::snapshot_commit(in_.run.home_repo, in_.run.base_commit, reference_tree_);
    drop_no_peek(reference_tree_, home_rel, no_peek);
    return std::nullopt;
  }

  // The external tool named for this verification, if any: --verify-cmd, else the binding's
  // verify_command; "kgate" alone stands for kgate's verify template.
  std::optional<std::string> external_tool() const {
    return external_verify_template(in_.verify_cmd ? *in_.verify_cmd
                                                   : in_.brief.binding.verify_command);
  }

  fs::path worker_program() const {
    return in_.worker_program.empty() ? workers_dir() / "kd-pyworker" : in_.worker_program;
  }

  // The measuring parent's work: the reference's worker (whose box also serves the inputs
  // worker) and the candidate's, each in its own box, then the protocol. Their boxes' logs go to
  // verifier/workers.log.
  MeasureJob measure_job() const {
    const briefs::Binding& bind = in_.brief.binding;
    const fs::path program = fs::canonical(worker_program());
    auto spec = [&](const std::string& name, const fs::path& tree) {
      WorkerSpec w;
      w.name = name;
      w.pipe_dir = in_.run_dir / ("verifier/pipes/" + name);
      w.box.profile = sandbox::load_profile("verifier");
      w.box.worktree = in_.run_dir / ("verifier/" + name + "-work");
      w.box.ro = {tree, program.parent_path()};
      w.argv = {"python3", "-I", program.string()};
      w.cwd = tree.string();
      w.env = measured_worker_env();
      w.timeout_s = 3600;
      return w;
    };
    MeasureJob job;
    job.workers = {spec("reference", reference_tree_), spec("candidate", candidate_tree_)};
    job.workers[0].companion = "inputs";
    job.plan.mode = in_.mode;
    job.plan.reference_module = (reference_tree_ / bind.reference).string();
    job.plan.reference_roots = {reference_tree_.string()};
    job.plan.candidate_module = (candidate_tree_ / cand_.path).string();
    job.plan.candidate_roots = {candidate_tree_.string()};
    job.log = in_.run_dir / "verifier/workers.log";
    return job;
  }

  json environment() const {
    if (in_.environment.is_null()) return json();
    json env = in_.environment;
    env["verifier_chip"] = m_.chip;
    return env;
  }

  // Writes the parent's receipt of `m` to `path`.
  void write_parent_receipt(const ParentMeasurement& m, const fs::path& path) const {
    const briefs::Binding& bind = in_.brief.binding;
    ParentReceiptInput r;
    r.m = &m;
    r.mode = in_.mode;
    r.family = in_.run.family;
    r.bar_text = in_.brief.stub.bar_text;
    r.bar = in_.brief.stub.bar.value_or(0);
    r.reference_path = (reference_tree_ / bind.reference).string();
    r.reference_sha256 = sha256_file_hex(reference_tree_ / bind.reference);
    r.candidate_path = (candidate_tree_ / cand_.path).string();
    r.candidate_sha256 = sha256_file_hex(candidate_tree_ / cand_.path);
    r.artifact_dir = artifact_dir_.string();
    r.worker = "kd-pyworker " + sha256_file_hex(worker_program());
    const std::string claim = author_claim(*in_.finish, cand_.sha);
    r.author_claim_ms = claim == "nan" ? 0 : std::stod(claim);
    r.signing_key = in_.signing_key;
    r.environment = environment();
    const std::string rounds = per_round_json(m);
    r.per_round_file = path.stem().string() + ".rounds.json";
    r.per_round_sha256 = sha256_hex(rounds);
    write_file_atomic(path.parent_path() / r.per_round_file, rounds);
    write_file_atomic(path, parent_receipt(r));
  }

  // Measures on a chip of the pipeline's choosing, unless a previous attempt already validated a
  // receipt of this very candidate: kdispatch's own parent writes the receipt, or an external
  // tool writes it in its box and the parent cross-checks it.
  void measure() {
    const bool have =
        in_.prior && in_.prior->value("sha", "") == cand_.sha &&
        agent_regular_file(receipt_.parent_path(), receipt_.filename()) &&
        contract::validate_receipt(receipt_).file_sha256 == in_.prior->value("sha256", "");
    const std::optional<std::string> tool = external_tool();
    m_.path = tool ? "external" : "kdispatch";
    if (have) {
      m_.chip = in_.prior->value("chip", "");
      if (in_.prior->contains("cross_check")) prior_cross_check_ = (*in_.prior)["cross_check"];
      return;
    }
    fs::remove_all(artifact_dir_);
    fs::create_directories(artifact_dir_);
    ChipJob job;
    if (tool) {
      sandbox::hand_to_box_user(artifact_dir_);
      const fs::path scratch = in_.run_dir / "verifier/work";
      fs::remove_all(scratch);
      fs::create_directories(scratch);
      sandbox::hand_to_box_user(scratch);
      const briefs::Binding& bind = in_.brief.binding;
      m_.argv = expand_verify_command(*tool, {{"reference", (snapshot_ / bind.reference).string()},
                                              {"candidate", (snapshot_ / cand_.path).string()},
                                              {"mode", in_.mode},
                                              {"family", in_.run.family},
                                              {"bar", in_.brief.stub.bar_text},
                                              {"claim", author_claim(*in_.finish, cand_.sha)},
                                              {"artifact_dir", artifact_dir_.string()},
                                              {"receipt", receipt_.string()}});
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
    } else {
      m_.argv = {"kdispatch measuring parent", worker_program().string()};
    }
    job.measure = measure_job();
    const ChipRun run = chips_(job, [&](const std::string& chip) {
      record_(journal::kVerifyStarted, {{"chip", chip},
                                        {"sha", cand_.sha},
                                        {"mode", in_.mode},
                                        {"argv", m_.argv},
                                        {"measured_by", m_.path}});
    });
    m_.chip = run.chip;
    m_.parent = run.parent;
    m_.result = run.result.to_json();
    write_file_atomic(in_.run_dir / "verifier/verify.log", "$ " + json(m_.argv).dump() + "\n" +
                                                               run.result.out + run.result.err +
                                                               "\n" + m_.result.dump(2) + "\n");
    throw_if_own_side_failed(run.result, tool.has_value());
    if (m_.parent)
      write_parent_receipt(*m_.parent, tool ? artifact_dir_ / "cross-check.json" : receipt_);
  }

  // The verification's own side failed, not the candidate: the reference's or the inputs' worker
  // (trusted code the candidate never touches), or a verify tool that could not be run or died
  // leaving no receipt. That is an error the campaign retries, never a verdict.
  void throw_if_own_side_failed(const sandbox::RunResult& r, bool tool) const {
    auto fail = [&](const std::string& what) {
      throw contract::ExperimentError(contract::ErrorCause::VerifyTool,
                                      id_.key() + ": " + what +
                                          " (verifier/verify.log); nothing was decided about the " +
                                          "candidate: retry with `kdispatch run --resume`");
    };
    if (m_.parent && !m_.parent->reference_error.empty())
      fail("the measuring parent could not run the reference: " + m_.parent->reference_error);
    if (!tool || agent_regular_file(receipt_.parent_path(), receipt_.filename())) return;
    if (r.exit_code == 126 || r.exit_code == 127)
      fail("the verify command " + quote(m_.argv.empty() ? "" : m_.argv[0]) +
           " could not be run (exit " + std::to_string(r.exit_code) + ")");
    if (r.signal != 0 && !r.timed_out && !r.killed_by_limit)
      fail("the verify command died of signal " + std::to_string(r.signal) +
           " and left no receipt");
  }

  // What the parent's own measurement says against the external tool's receipt: each entry caps
  // the verdict at inconclusive.
  json cross_check() const {
    if (!prior_cross_check_.is_null()) return prior_cross_check_;
    if (m_.path != "external") return json();
    json out = {{"problems", json::array()}};
    if (!m_.parent) {
      out["problems"].push_back("the parent's cross-check did not run");
      return out;
    }
    const ParentMeasurement& p = *m_.parent;
    out["parity_verdict"] = p.parity_verdict;
    out["speedup"] = p.measured() ? json(p.speedup) : json();
    out["speedup_spread"] = {{"low", p.speedup_low}, {"high", p.speedup_high}};
    out["anomalies"] = p.anomalies;
    out["wall_s"] = p.wall_s;
    out["receipt"] = (artifact_dir_ / "cross-check.json").string();
    if (p.parity_verdict != "PASS")
      out["problems"].push_back("the cross-check's parity on fresh secret inputs failed: " +
                                p.parity.value("error", std::string("outputs differ")));
    for (const auto& a : p.anomalies)
      out["problems"].push_back("the cross-check's measurement: " + a);
    if (p.measured() && check_.ok && check_.speedup) {
      const double tol = cross_check_tolerance(p);
      const double ratio = *check_.speedup / p.speedup;
      out["tolerance"] = tol;
      out["tool_over_parent"] = ratio;
      if (ratio > 1 + tol || ratio < 1 / (1 + tol))
        out["problems"].push_back("the tool's speedup " + fmt_number(*check_.speedup) +
                                  " disagrees with the parent's " + fmt_number(p.speedup) +
                                  " beyond the noise (tolerance " + fmt_number(tol) + ")");
    }
    return out;
  }

  void validate() {
    check_ = contract::validate_receipt(receipt_);
    // kdispatch's own receipts are signed by the parent: one without a valid signature was not
    // written by it.
    if (check_.ok && m_.path == "kdispatch" && !in_.signing_key.empty()) {
      contract::SignatureCheck sig = contract::check_receipt_signature(
          read_agent_file(receipt_, kMaxAgentJsonBytes), in_.signing_key);
      signature_ = sig.ok ? "valid" : sig.present ? "invalid" : "missing";
      if (!sig.ok) {
        check_.ok = false;
        check_.problems.push_back(sig.present ? sig.problem
                                              : "the receipt carries no signature of the "
                                                "dispatcher's measuring parent");
      }
    }
    if (check_.ok)
      receipt_json_ = json::parse(read_agent_file(receipt_, kMaxAgentJsonBytes), nullptr, false);
    cross_check_ = cross_check();
    json record = {{"sha", cand_.sha},
                   {"chip", m_.chip},
                   {"receipt", receipt_rel_},
                   {"sha256", check_.file_sha256},
                   {"ok", check_.ok},
                   {"verdict", check_.verdict},
                   {"problems", check_.problems},
                   {"measured_by", m_.path}};
    if (!cross_check_.is_null()) record["cross_check"] = cross_check_;
    record_(journal::kReceiptValidated, record);
    if (check_.ok && check_.cmd != "verify") {
      check_.ok = false;
      check_.problems.push_back("a " + check_.cmd + " receipt is not a verification");
    }
    scan_ = audit::scan_candidate(read_agent_file(candidate_tree_ / cand_.path, kMaxAgentJsonBytes),
                                  cand_.path);
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
    if (receipt_json_.is_object())
      for (const auto& a : receipt_json_.value("anomalies", json::array()))
        if (a.is_string()) in.anomalies.push_back(a.get<std::string>());
    // The parent's receipt carries the spread of its per-round speedups.
    if (m_.path == "kdispatch" && receipt_json_.is_object()) {
      const json q = receipt_json_.value("/speedup_spread/low"_json_pointer, json());
      if (q.is_number()) in.speedup_low = q.get<double>();
    }
    if (cross_check_.is_object())
      for (const auto& p : cross_check_.value("problems", json::array()))
        in.cross_check_problems.push_back(p.get<std::string>());
    for (const auto& f : scan_)
      in.scan_findings.push_back(f.line ? cand_.path + ":" + std::to_string(f.line) + ": " + f.what
                                        : cand_.path + ": " + f.what);
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
            {"measurement",
             {{"path", m_.path == "kdispatch"  ? "kdispatch's own measurement"
                       : m_.path == "external" ? "external tool, cross-checked by kdispatch"
                                               : ""},
              {"signature", signature_},
              {"cross_check", cross_check_},
              {"hidden_from_candidate", hidden_},
              {"static_scan", scan_json()}}},
            {"transcript_heads",
             {{"author", in_.run.author_transcript_head},
              {"verifier", review_ ? review_->transcript_head : ""}}},
            {"llm_verifier", review_ ? review_->record : json()},
            {"author_end_reason", in_.run.end_reason},
            {"bar", bar}};
  }

  json scan_json() const {
    json out = json::array();
    for (const auto& f : scan_)
      out.push_back({{"line", f.line}, {"rule", f.rule}, {"what", f.what}});
    return out;
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
  const fs::path snapshot_, reference_tree_, candidate_tree_;
  std::vector<std::string> hidden_;  // no-peek files left out of every snapshot
  json prior_cross_check_;           // a resumed verification's
  json cross_check_;
  std::string signature_ = "not checked";
  std::vector<audit::ScanFinding> scan_;
  Candidate cand_;
  Measurement m_;
  contract::ReceiptCheck check_;
  json receipt_json_;  // the receipt, when valid
  std::optional<Review> review_;
};

}  // namespace

ChipRun run_chip_job_on(const ChipJob& job, const contract::Chip& chip) {
  ChipRun out;
  out.chip = chip.id;
  out.result.exit_code = 0;
  if (!job.request.argv.empty()) {
    sandbox::BoxSpec spec = job.spec;
    spec.chip = chip;
    out.result = sandbox::Box::open(spec)->run(job.request);
  }
  if (job.measure) out.parent = run_measure_job(*job.measure, chip);
  return out;
}

VerificationResult run_verification(const VerificationInput& input, const ChipRunner& chips,
                                    const Recorder& record, const Reviewer& reviewer) {
  return Verification(input, chips, record, reviewer).run();
}

}  // namespace kd::verify
