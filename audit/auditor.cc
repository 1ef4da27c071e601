#include "audit/auditor.h"

#include <algorithm>
#include <array>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "audit/candidate_scan.h"
#include "audit/repo_commits.h"
#include "audit/shell_scan.h"
#include "audit/text_rules.h"
#include "common/agent_file.h"
#include "common/errors.h"
#include "common/files.h"
#include "common/glob.h"
#include "common/text.h"
#include "common/time.h"
#include "contract/ledger.h"
#include "contract/receipt.h"
#include "contract/receipt_signature.h"
#include "contract/run_record.h"
#include "git/reader.h"

namespace kd::audit {
namespace {

namespace fs = std::filesystem;

bool empty_cell(std::string_view cell) {
  std::string_view c = trim(cell);
  return c.empty() || c == "-" || c == "—" || c == "n/a" || c == "none";
}

bool has_digit(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The candidate ledger inside a written page or a finish payload: from the `loaded:` line (or the
// table header when that line is missing) to the end of the table.
std::optional<std::string> extract_ledger(std::string_view text) {
  size_t pos = 0, table = std::string_view::npos, loaded = std::string_view::npos;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    std::string_view line =
        trim(text.substr(pos, eol == std::string_view::npos ? std::string_view::npos : eol - pos));
    std::string low = lower(line);
    if (starts_with(low, "loaded:"))
      loaded = pos;
    else if (starts_with(low, "| candidate") || starts_with(low, "|candidate")) {
      table = pos;
      break;
    } else if (!line.empty()) {
      loaded = std::string_view::npos;  // the attestation must sit right before the table
    }
    if (eol == std::string_view::npos) break;
    pos = eol + 1;
  }
  if (table == std::string_view::npos) return std::nullopt;
  return std::string(text.substr(loaded != std::string_view::npos ? loaded : table));
}

class FileAudit {
 public:
  FileAudit(const fs::path& file, AuditContext ctx, const AuditPolicy& policy, AuditReport& report)
      : file_(file), ctx_(std::move(ctx)), policy_(policy), report_(report) {}

  void header(const HeaderInfo& h) {
    if (ctx_.worktree.empty()) ctx_.worktree = h.worktree;
    if (ctx_.references.empty()) ctx_.references = h.references;
    if (ctx_.no_peek.empty()) ctx_.no_peek = h.no_peek;
    if (!h.artifact_dir.empty()) {
      ctx_.receipt_dirs.push_back(h.artifact_dir);
      ctx_.writable.push_back(h.artifact_dir);
    }
  }

  void cwd(const std::string& dir) {
    if (ctx_.worktree.empty()) ctx_.worktree = dir;
  }

  void event(const Event& e) {
    ++report_.events[event_kind_name(e.kind)];
    switch (e.kind) {
      case EventKind::FileWrite:
        on_write(e);
        break;
      case EventKind::FileRead:
        on_read(e);
        break;
      case EventKind::ModelText:
        on_text(e.text, e);
        break;
      case EventKind::Commit:
        on_commit(e);
        break;
      case EventKind::Finish:
        // The end record repeats the accepted finish call; check its text once.
        if (e.content != finish_payload_) on_text(e.content, e);
        finish_ledger_ = e.text;
        finish_payload_ = e.content;
        finish_line_ = e.line;
        break;
      case EventKind::Violation:
        on_violation(e);
        break;
      case EventKind::Supervision:
        if (e.tool != "approved")
          report_.supervision.push_back(
              {e.tool, e.text, file_.string() + ":" + std::to_string(e.line)});
        break;
      case EventKind::Command:
      case EventKind::Subagent:
        break;
    }
  }

  void finish(const FileStats& stats) {
    if (stats.chain && policy_.enabled(Rule::ChainIntegrity) && !stats.chain->ok)
      add(Rule::ChainIntegrity,
          "transcript chain broken at line " + std::to_string(stats.chain->broken_line) + ": " +
              stats.chain->reason,
          stats.chain->broken_line);
    if (stats.format == Format::Unknown)
      throw Error(
          file_.string() +
          " is in no transcript format kdispatch audit reads (kdispatch, Claude Code, Codex)");
    if (!stats.chain && policy_.enabled(Rule::ChainIntegrity))
      note_unchecked(Rule::ChainIntegrity,
                     std::string(format_name(stats.format)) + " logs carry no hash chain");
    if (stats.torn_last_line && policy_.enabled(Rule::TranscriptTorn))
      add(Rule::TranscriptTorn,
          "the last line is torn (no newline, " +
              std::string(stats.chain ? "chain unverifiable there" : "not parsed") + ")",
          stats.lines);
    if (stats.malformed > 0 && policy_.enabled(Rule::TranscriptTorn))
      add(Rule::TranscriptTorn,
          std::to_string(stats.malformed) + " malformed line(s) skipped, first at line " +
              std::to_string(stats.malformed_lines.front()),
          stats.malformed_lines.front());
    if (ctx_.worktree.empty()) note_unchecked(Rule::WriteOutsideWorktree, "no worktree");
    if (ctx_.references.empty()) note_unchecked(Rule::ReferenceWrite, "no reference module");
    if (ctx_.no_peek.empty()) note_unchecked(Rule::NoPeekRead, "no no-peek globs");
    ledger_rules();
    stub_rule();
    candidate_scan_rule();
  }

  // A parent-measured receipt must carry the dispatcher's signature when its key is at hand.
  void check_signature(const std::string& receipt, const std::string& key,
                       const std::string& what) {
    if (!policy_.enabled(Rule::ReceiptInvalid) || empty_cell(receipt)) return;
    std::vector<fs::path> places = {fs::path(receipt)};
    for (const auto& d : ctx_.receipt_dirs)
      places.push_back(fs::path(d) / receipt);
    for (const auto& p : places) {
      std::error_code ec;
      if (!fs::is_regular_file(p, ec)) continue;
      const std::string text = read_file(p);
      contract::SignatureCheck sig = contract::check_receipt_signature(text, key);
      if (sig.present && !sig.ok)
        add(Rule::ReceiptInvalid, what + ": receipt " + quote(receipt) + ": " + sig.problem, 0);
      else if (!sig.present && text.find("\"measured_by\"") != std::string::npos)
        add(Rule::ReceiptInvalid,
            what + ": receipt " + quote(receipt) +
                " claims kdispatch's measuring parent but carries no signature",
            0);
      return;
    }
  }

  // Shared with run-directory outcomes: a `supported` claim needs a full, firing PASS at the bar.
  void check_supported(const std::string& receipt, std::optional<double> bar, uint64_t line,
                       const std::string& what, const std::string& only = "") {
    if (!policy_.enabled(Rule::SupportedWithoutPass)) return;
    if (empty_cell(receipt)) {
      add(Rule::SupportedWithoutPass, what + " is supported without a receipt", line);
      return;
    }
    const contract::ReceiptCheck* r = receipt_check(receipt, only);
    if (!r) {
      add(Rule::SupportedWithoutPass,
          what + " is supported but its receipt " + quote(receipt) + " does not resolve", line);
      return;
    }
    if (!r->ok) {
      add(Rule::SupportedWithoutPass,
          what + " is supported but its receipt " + quote(receipt) + " does not validate", line);
      return;
    }
    if (r->verdict != "PASS")
      add(Rule::SupportedWithoutPass,
          what + " is supported but receipt " + quote(receipt) + " says " + r->verdict, line);
    else if (r->mode == "screen")
      add(Rule::SupportedWithoutPass,
          what + " is supported from a screen receipt " + quote(receipt) +
              " (a lead, not a verdict)",
          line);
    else if (r->custom_call_count && *r->custom_call_count == 0)
      add(Rule::SupportedWithoutPass,
          what + " is supported but receipt " + quote(receipt) +
              " shows 0 custom calls (the kernel did not fire)",
          line);
    else if (!r->speedup)
      add(Rule::SupportedWithoutPass,
          what + " is supported but receipt " + quote(receipt) + " has no speedup", line);
    else if (*r->speedup <= 1.0 || (bar && *r->speedup < *bar))
      add(Rule::SupportedWithoutPass,
          what + " is supported with speedup " + std::to_string(*r->speedup) +
              (bar ? " below the bar " + std::to_string(*bar) : " not above 1.0"),
          line);
  }

  // author/tree.json, the dispatcher's look at the worktree once the author's box was gone.
  void tree_survey(const fs::path& tree_json) {
    if (!policy_.enabled(Rule::WorktreeTampering)) return;
    std::error_code ec;
    if (!fs::is_regular_file(tree_json, ec)) {
      note_unchecked(Rule::WorktreeTampering, "no author/tree.json in the run directory");
      return;
    }
    const nlohmann::json doc = nlohmann::json::parse(read_file(tree_json), nullptr, false);
    if (!doc.is_object() || !doc.contains("findings") || !doc["findings"].is_array()) {
      add(Rule::WorktreeTampering, quote(tree_json.string()) + " is not a worktree survey", 0);
      return;
    }
    for (const auto& f : doc["findings"])
      add(Rule::WorktreeTampering,
          "the author left in the worktree: " + (f.is_string() ? f.get<std::string>() : f.dump()),
          0);
  }

  const AuditContext& context() const { return ctx_; }

 private:
  void add(Rule rule, std::string defect, uint64_t line) {
    if (++per_rule_[static_cast<size_t>(rule)] > policy_.max_findings_per_rule) {
      ++report_.suppressed[std::string(rule_id(rule))];
      return;
    }
    Finding f;
    f.rule = rule;
    f.severity = policy_.rule(rule).severity;
    f.defect = std::move(defect);
    f.evidence = file_.string() + (line ? ":" + std::to_string(line) : "");
    report_.findings.push_back(std::move(f));
  }

  void note_unchecked(Rule rule, const std::string& why) {
    if (policy_.enabled(rule)) report_.not_checked.emplace(rule_id(rule), why);
  }

  bool is_reference(const std::string& path) const {
    for (const auto& ref : ctx_.references)
      if (path_within(path, resolve_path(ctx_.worktree, ref))) return true;
    return false;
  }

  // The wiki, the runs' root and the home repository are never scratch, wherever they are kept
  // (a wiki under /tmp is still the wiki).
  bool never_scratch(const std::string& path) const {
    std::vector<std::string> roots = ctx_.never_scratch;
    roots.push_back(ctx_.wiki);
    roots.push_back(ctx_.repository);
    for (const auto& root : roots)
      if (!root.empty() && path_within(path, resolve_path("", root))) return true;
    return false;
  }

  void on_write(const Event& e) {
    // Judged by where the write lands: a relative path is the worktree's, ".." resolved.
    const std::string landed = ctx_.worktree.empty() || e.path.empty()
                                   ? std::string()
                                   : resolve_path(ctx_.worktree, e.path);
    if (policy_.enabled(Rule::WriteOutsideWorktree) && !landed.empty() &&
        !path_within(landed, resolve_path("", ctx_.worktree))) {
      bool allowed = false;
      for (const auto& dir : ctx_.writable)
        allowed = allowed || path_within(landed, resolve_path("", dir));
      if (!allowed && !never_scratch(landed)) {
        for (const auto& root : policy_.allowed_write_roots)
          allowed = allowed || path_within(landed, root);
      }
      if (!allowed && written_outside_.insert(landed).second)
        add(Rule::WriteOutsideWorktree,
            "write outside the worktree " + quote(ctx_.worktree) + ": " + quote(landed) + " (" +
                e.tool +
                (never_scratch(landed) ? ", into the wiki, the runs or the home repository" : "") +
                ")",
            e.line);
    }
    if (policy_.enabled(Rule::ReferenceWrite) && is_reference(e.path))
      add(Rule::ReferenceWrite,
          "the reference module " + quote(e.path) + " was written (" + e.tool + ")", e.line);
    if (e.content.empty()) return;
    if (auto ledger = extract_ledger(e.content)) {
      page_ledger_ = *ledger;
      page_ledger_line_ = e.line;
    }
    if (front_matter_value(e.content, "verdict") == "supported") {
      std::optional<double> bar = ctx_.bar;
      std::string page_bar = front_matter_value(e.content, "bar");
      if (!page_bar.empty()) bar = std::strtod(page_bar.c_str(), nullptr);
      check_supported(front_matter_value(e.content, "verified_by"), bar, e.line,
                      "page " + quote(e.path));
    }
  }

  // What the box refused is an attempt, whatever it was kept from. Limits a command ran into
  // (its deadline, an rlimit, the cgroup, the output cap) are not attempts.
  void on_violation(const Event& e) {
    static const std::set<std::string> kLimits = {"timeout", "rlimit", "cgroup", "output"};
    if (!policy_.enabled(Rule::SandboxViolation) || kLimits.count(e.tool)) return;
    add(Rule::SandboxViolation, "the sandbox refused: " + e.text, e.line);
  }

  bool no_peek_match(const std::string& path) const {
    for (const auto& g : ctx_.no_peek) {
      if (!g.empty() && g[0] == '/') {
        if (path_glob_match(g, path)) return true;
        continue;
      }
      std::string wt = resolve_path("", ctx_.worktree);
      if (!wt.empty() && path_within(path, wt) && path.size() > wt.size()) {
        if (path_glob_match(g, path.substr(wt.size() + 1))) return true;
        continue;
      }
      if (path_glob_match("**/" + g, path)) return true;
    }
    return false;
  }

  void on_read(const Event& e) {
    // A directory listed or searched counts as read when the glob covers its contents.
    if (policy_.enabled(Rule::NoPeekRead) && !ctx_.no_peek.empty() &&
        (no_peek_match(e.path) || no_peek_match(e.path + "/")))
      add(Rule::NoPeekRead, "read of no-peek path " + quote(e.path) + " (" + e.tool + ")", e.line);
  }

  void on_text(const std::string& text, const Event& e) {
    if (e.role == "verifier" || text.empty()) return;
    if (policy_.enabled(Rule::VerdictLanguage))
      if (auto hit = find_verdict_language(text, policy_))
        add(Rule::VerdictLanguage, "author output grades itself: \"" + *hit + "\"", e.line);
    if (policy_.enabled(Rule::NumbersWithoutReceipt) && e.kind == EventKind::ModelText)
      if (auto hit = find_unreceipted_speedup(text))
        add(Rule::NumbersWithoutReceipt, "speedup claimed with no receipt cited: \"" + *hit + "\"",
            e.line);
  }

  void on_commit(const Event& e) {
    std::string subject = e.text.substr(0, e.text.find('\n'));
    contract::CommitSubject parsed;
    bool ok = contract::parse_commit_subject(e.text, &parsed);
    if (!ok) {
      bool other = false;
      for (const auto& p : policy_.commit_other_prefixes)
        other = other || subject.rfind(p, 0) == 0;
      if (!other && policy_.enabled(Rule::CommitGrammar))
        add(Rule::CommitGrammar,
            "commit subject " + quote(subject) +
                " does not match candN(<family> vNNN): <what> — <signal>",
            e.line);
      return;
    }
    if (commit_candidates_.emplace(parsed.candidate, e.line).second) {
      auto t = parse_rfc3339(e.ts);
      if (!t && !untimed_commit_line_) untimed_commit_line_ = e.line;
      if (t && (!first_commit_ || *t < first_commit_->first))
        first_commit_ = std::make_pair(*t, e.line);
    }
  }

  // A cited receipt, resolved beneath one of the places receipts are kept (or, given absolute
  // and outside them, beneath its own directory) and read as a file an agent could have left: no
  // link, FIFO or device is followed or read. `only` restricts the places to one directory.
  const contract::ReceiptCheck* receipt_check(const std::string& cited,
                                              const std::string& only = "") {
    const std::string key = only + "\n" + cited;
    auto it = receipts_.find(key);
    if (it != receipts_.end()) return it->second ? &*it->second : nullptr;
    std::vector<std::pair<fs::path, fs::path>> candidates;  // (directory, path beneath it)
    const fs::path p = fs::path(cited).lexically_normal();
    std::vector<fs::path> dirs;
    if (!only.empty()) {
      dirs.push_back(only);
    } else {
      for (const auto& d : ctx_.receipt_dirs)
        dirs.push_back(d);
      if (!ctx_.worktree.empty()) dirs.push_back(ctx_.worktree);
      dirs.push_back(file_.parent_path());
    }
    for (const auto& d : dirs) {
      const fs::path rel =
          p.is_absolute() ? p.lexically_relative(fs::path(d).lexically_normal()) : p;
      if (!rel.empty() && *rel.begin() != "..") candidates.emplace_back(d, rel);
    }
    if (p.is_absolute() && only.empty()) candidates.emplace_back(p.parent_path(), p.filename());
    std::optional<contract::ReceiptCheck> found;
    for (const auto& [dir, rel] : candidates) {
      if (!agent_regular_file(dir, rel)) continue;
      try {
        found = contract::validate_receipt_text(read_agent_file(dir, rel, kMaxAgentJsonBytes),
                                                (dir / rel).string());
      } catch (const Error& e) {
        found.emplace();
        found->problems.push_back(e.what());
      }
      break;
    }
    auto& slot = receipts_[key];
    slot = std::move(found);
    return slot ? &*slot : nullptr;
  }

  void ledger_rules() {
    std::string text = !finish_ledger_.empty() ? finish_ledger_ : page_ledger_;
    uint64_t line = !finish_ledger_.empty() ? finish_line_ : page_ledger_line_;
    if (text.empty()) {
      for (Rule rule :
           {Rule::LoadedLine, Rule::LedgerVsCommits, Rule::PlanCoverage, Rule::ReceiptInvalid})
        note_unchecked(rule, "no candidate ledger in " + file_.filename().string());
      return;
    }
    contract::Ledger ledger = contract::parse_ledger(text);
    if (policy_.enabled(Rule::LoadedLine) && !ledger.has_loaded_line)
      add(Rule::LoadedLine,
          "the candidate ledger does not start with the loaded: [...] attestation", line);
    std::set<std::string> rows;
    std::unique_ptr<RepoCommits> repo;
    if (!ctx_.repository.empty() && policy_.enabled(Rule::LedgerVsCommits)) {
      try {
        repo = std::make_unique<RepoCommits>(ctx_.repository, ctx_.branch);
      } catch (const Error& e) {
        note_unchecked(Rule::LedgerVsCommits, std::string("repository unusable: ") + e.what());
      }
    }
    // The ledger's cells come trimmed (contract/ledger.h); each row is judged from them as is.
    for (const contract::LedgerRow& row : ledger.rows) {
      rows.insert(row.candidate);
      const bool no_receipt = empty_cell(row.receipt);
      if (policy_.enabled(Rule::ReceiptInvalid) && !no_receipt) {
        const contract::ReceiptCheck* r = receipt_check(row.receipt);
        if (!r)
          add(Rule::ReceiptInvalid,
              row.candidate + " cites receipt " + quote(row.receipt) + ", which does not exist",
              line);
        else if (!r->ok)
          add(Rule::ReceiptInvalid,
              row.candidate + " cites receipt " + quote(row.receipt) +
                  ", which does not validate: " + r->problems.front(),
              line);
      }
      if (policy_.enabled(Rule::NumbersWithoutReceipt) && no_receipt &&
          (has_digit(row.p50_ms) || has_digit(row.vs_naive)))
        add(Rule::NumbersWithoutReceipt,
            row.candidate + " reports p50 " + quote(row.p50_ms) + " / vs naive " +
                quote(row.vs_naive) + " with no receipt",
            line);
      if (!policy_.enabled(Rule::LedgerVsCommits) || empty_cell(row.sha)) continue;
      const std::string cites = row.candidate + " cites commit " + quote(row.sha);
      if (repo) {
        RepoCommit c = repo->lookup(row.sha);
        contract::CommitSubject s;
        if (!c.found)
          add(Rule::LedgerVsCommits, cites + ", which is not in the repository", line);
        else if (!c.on_branch)
          add(Rule::LedgerVsCommits, cites + ", which is not on the candidate branch", line);
        else if (!contract::parse_commit_subject(c.subject, &s) || s.candidate != row.candidate)
          add(Rule::LedgerVsCommits, cites + " whose subject is " + quote(c.subject), line);
      } else if (!commit_candidates_.count(row.candidate) && !commit_candidates_.empty()) {
        add(Rule::LedgerVsCommits,
            row.candidate + " has a ledger row with commit " + quote(row.sha) +
                " but no such candidate commit in the transcript",
            line);
      }
    }
    if (policy_.enabled(Rule::LedgerVsCommits))
      for (const auto& [cand, at] : commit_candidates_)
        if (!rows.count(cand))
          add(Rule::LedgerVsCommits, "commit for " + cand + " has no ledger row", at);
    plan_rule(rows, line);
  }

  void plan_rule(const std::set<std::string>& rows, uint64_t line) {
    if (ctx_.plan.empty()) {
      note_unchecked(Rule::PlanCoverage, "no candidate plan");
      return;
    }
    if (!policy_.enabled(Rule::PlanCoverage)) return;
    std::set<std::string> abandoned;
    nlohmann::json fin =
        nlohmann::json::parse(finish_payload_.empty() ? "{}" : finish_payload_, nullptr, false);
    if (fin.is_object() && fin.contains("abandoned") && fin["abandoned"].is_array())
      for (const auto& a : fin["abandoned"]) {
        std::string id = str_of(a, "item").empty() ? str_of(a, "candidate") : str_of(a, "item");
        if (!trim(str_of(a, "reason")).empty()) abandoned.insert(id);
      }
    for (const auto& item : ctx_.plan)
      if (!rows.count(item) && !abandoned.count(item))
        add(Rule::PlanCoverage,
            "plan item " + item + " was neither run nor abandoned with a reason", line);
  }

  // The final candidate's source, as committed, through the static scan.
  void candidate_scan_rule() {
    if (!policy_.enabled(Rule::CandidateScan)) return;
    nlohmann::json fin =
        nlohmann::json::parse(finish_payload_.empty() ? "{}" : finish_payload_, nullptr, false);
    if (!fin.is_object() || !fin.contains("final_candidate") || !fin["final_candidate"].is_object())
      return;
    std::string path = str_of(fin["final_candidate"], "path");
    const std::string sha = str_of(fin["final_candidate"], "sha");
    if (path.rfind("./", 0) == 0) path = path.substr(2);
    if (ctx_.repository.empty() || path.empty() || sha.empty()) {
      note_unchecked(Rule::CandidateScan, "no repository or final candidate to read");
      return;
    }
    std::optional<std::string> source;
    try {
      source = git::file_at(ctx_.repository, sha, path);
    } catch (const std::exception& e) {
      note_unchecked(Rule::CandidateScan, std::string("candidate unreadable: ") + e.what());
      return;
    }
    if (!source) {
      note_unchecked(Rule::CandidateScan, "the final candidate " + path + " is not in " + sha);
      return;
    }
    for (const auto& f : scan_candidate(*source, path))
      add(Rule::CandidateScan, path + ":" + std::to_string(f.line) + " (" + f.rule + ") " + f.what,
          finish_line_);
  }

  void stub_rule() {
    if (ctx_.stub_committed.empty()) {
      note_unchecked(Rule::StubOrder, "no stub commit time");
      return;
    }
    auto stub = parse_rfc3339(ctx_.stub_committed);
    if (!stub) {
      note_unchecked(Rule::StubOrder,
                     "stub commit time " + quote(ctx_.stub_committed) + " is not an RFC 3339 time");
      return;
    }
    if (!policy_.enabled(Rule::StubOrder)) return;
    if (first_commit_ && first_commit_->first <= *stub) {
      add(Rule::StubOrder,
          "the first candidate commit is not later than the stub commit (" + ctx_.stub_committed +
              ")",
          first_commit_->second);
    } else if (untimed_commit_line_) {
      // It may have been the first: the order cannot be shown to hold.
      note_unchecked(Rule::StubOrder, "the candidate commit at line " +
                                          std::to_string(untimed_commit_line_) +
                                          " has no RFC 3339 time");
    }
  }

  fs::path file_;
  AuditContext ctx_;
  const AuditPolicy& policy_;
  AuditReport& report_;
  std::array<size_t, kRuleCount> per_rule_{};          // findings so far, by rule
  std::set<std::string> written_outside_;              // distinct paths, reported once each
  std::map<std::string, uint64_t> commit_candidates_;  // candN -> line of its first commit
  std::optional<std::pair<double, uint64_t>> first_commit_;
  uint64_t untimed_commit_line_ = 0;  // the first candidate commit without a readable time
  std::string finish_ledger_, finish_payload_, page_ledger_;
  uint64_t finish_line_ = 0, page_ledger_line_ = 0;
  std::map<std::string, std::optional<contract::ReceiptCheck>> receipts_;
};

bool is_transcript_name(const fs::path& p) {
  std::string n = p.filename().string();
  auto ends = [&](const std::string& s) {
    return n.size() >= s.size() && n.compare(n.size() - s.size(), s.size(), s) == 0;
  };
  return ends(".jsonl") || ends(".jsonl.zst");
}

// Files to audit for one input, in a stable order.
std::vector<fs::path> expand(const fs::path& input) {
  std::error_code ec;
  if (!fs::exists(input, ec))
    throw Error("audit input " + quote(input.string()) + " does not exist");
  std::vector<fs::path> out;
  if (!fs::is_directory(input, ec)) {
    out.push_back(input);
    // A Claude Code session keeps its subagents in <session>/subagents/agent-*.jsonl.
    fs::path side = input.parent_path() / input.stem() / "subagents";
    if (input.extension() == ".jsonl" && fs::is_directory(side, ec)) {
      std::vector<fs::path> subs;
      for (const auto& e : fs::directory_iterator(side, ec))
        if (e.path().filename().string().rfind("agent-", 0) == 0 && is_transcript_name(e.path()))
          subs.push_back(e.path());
      std::sort(subs.begin(), subs.end());
      out.insert(out.end(), subs.begin(), subs.end());
    }
    return out;
  }
  for (const char* role : {"author", "verifier"})
    if (fs::is_regular_file(input / role / "transcript.jsonl", ec))
      out.push_back(input / role / "transcript.jsonl");
  if (!out.empty()) return out;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(input, ec))
    if (e.is_regular_file() && is_transcript_name(e.path())) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    // Codex may keep both a plain and a compressed rollout; the plain one wins.
    if (f.extension() == ".zst" &&
        std::binary_search(files.begin(), files.end(), f.parent_path() / f.stem()))
      continue;
    for (const auto& g : expand(f))
      out.push_back(g);
  }
  if (out.empty())
    throw Error("audit input " + quote(input.string()) +
                " holds no transcript (*.jsonl, *.jsonl.zst)");
  return out;
}

bool wants_events(const AuditPolicy& policy) {
  for (const auto& r : audit_rules())
    if (r.reads_events && policy.enabled(r.rule)) return true;
  return false;
}

// The run record (run.json) of a run directory whose author transcript this is, when there is one.
std::optional<contract::RunRecord> run_record_of(const fs::path& file) {
  if (file.filename() != "transcript.jsonl" || file.parent_path().filename() != "author")
    return std::nullopt;
  const fs::path run = file.parent_path().parent_path();
  std::error_code ec;
  if (!fs::is_regular_file(run / "run.json", ec)) return std::nullopt;
  try {
    return contract::RunRecord::load(run);
  } catch (const Error&) {
    return std::nullopt;
  }
}

// A run directory's outcome.json: a `supported` verdict is checked against its receipt, the one
// the run record's wiki holds at the recorded path (never a file of the same name an author could
// have left in a directory searched first).
void audit_outcome(const fs::path& run, const std::optional<contract::RunRecord>& record,
                   FileAudit& audit) {
  fs::path outcome = run / "outcome.json";
  std::error_code ec;
  if (!fs::is_regular_file(outcome, ec)) return;
  nlohmann::json doc = nlohmann::json::parse(read_file(outcome), nullptr, false);
  if (!doc.is_object() || str_of(doc, "verdict") != "supported") return;
  std::optional<double> bar = audit.context().bar;
  if (doc.contains("bar") && doc["bar"].is_number()) bar = doc["bar"].get<double>();
  // kdispatch writes {"receipt": {"path": ...}}; a bare path is accepted too.
  std::string receipt = doc.contains("receipt") && doc["receipt"].is_object()
                            ? str_of(doc["receipt"], "path")
                            : str_of(doc, "receipt");
  audit.check_supported(receipt, bar, 0, "run outcome " + quote(outcome.string()),
                        record ? record->wiki.string() : "");
  // The run root (<root>/<campaign>/<run>) keeps the dispatcher's key, when this machine has it.
  if (auto key = contract::load_signing_key(
          contract::signing_key_path(fs::absolute(run).parent_path().parent_path())))
    audit.check_signature(receipt, *key, "run outcome " + quote(outcome.string()));
}

}  // namespace

AuditReport run_audit(const std::vector<fs::path>& inputs, const AuditContext& flags,
                      const AuditPolicy& policy) {
  AuditReport report;
  ImportOptions options;
  options.check_chain = policy.enabled(Rule::ChainIntegrity);
  options.want_events = wants_events(policy);
  for (const auto& input : inputs) {
    std::vector<fs::path> files = expand(input);
    for (const auto& file : files) {
      // An author transcript in its run directory: what the run record says the run used.
      const std::optional<contract::RunRecord> record = run_record_of(file);
      AuditContext ctx = flags;
      if (record) {
        if (ctx.wiki.empty()) ctx.wiki = record->wiki.string();
        ctx.never_scratch.push_back(record->home_repo.string());
        ctx.never_scratch.push_back(
            fs::absolute(file).parent_path().parent_path().parent_path().parent_path().string());
      }
      FileAudit audit(file, ctx, policy, report);
      ImportSink sink;
      sink.event = [&](const Event& e) { audit.event(e); };
      sink.header = [&](const HeaderInfo& h) { audit.header(h); };
      sink.cwd = [&](const std::string& d) { audit.cwd(d); };
      FileStats stats = import_file(file, options, sink);
      audit.finish(stats);
      if (record) {
        audit_outcome(file.parent_path().parent_path(), record, audit);
        audit.tree_survey(file.parent_path() / "tree.json");
      } else if (file.filename() == "transcript.jsonl" &&
                 file.parent_path().filename() == "author") {
        audit_outcome(file.parent_path().parent_path(), std::nullopt, audit);
      }
      report.files.push_back(std::move(stats));
    }
  }
  return report;
}

int audit_exit_status(const AuditReport& report) {
  int status = 0;
  for (const auto& f : report.findings) {
    if (f.severity == Severity::Fabrication || f.severity == Severity::Violation) return 2;
    status = 1;
  }
  return status;
}

}  // namespace kd::audit
