#include "audit/auditor.h"

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "audit/repo_commits.h"
#include "audit/shell_scan.h"
#include "audit/text_rules.h"
#include "common/errors.h"
#include "common/files.h"
#include "common/glob.h"
#include "common/time.h"
#include "contract/ledger.h"
#include "contract/receipt.h"

namespace kd::audit {
namespace {

namespace fs = std::filesystem;

struct RuleText {
  const char* correct;
  const char* reread;
};

// What to do and where the rule comes from, per rule id (sections of the wiki's process documents).
const std::map<std::string, RuleText>& rule_texts() {
  static const std::map<std::string, RuleText> t = {
      {"chain_integrity",
       {"treat the transcript as untrusted; recover the original from the run's backup and find "
        "who edited it",
        "docs/transcripts.md § The chain"}},
      {"transcript_torn",
       {"the session was cut mid-write; audit what is there and note the gap",
        "docs/transcripts.md § The chain"}},
      {"write_outside_worktree",
       {"revert the write and keep every edit inside the family worktree",
        "wiki/kernel_experiments/program.md § What you CANNOT do"}},
      {"reference_write",
       {"restore the reference module from the integration branch; the parity oracle is never "
        "edited",
        "wiki/kernel_experiments/program.md § What you CANNOT do"}},
      {"no_peek_read",
       {"void the capability-eval result: the author saw a no-peek path",
        ".claude/skills/author-kernel/SKILL.md § Before authoring (activity)"}},
      {"verdict_language",
       {"strip verdict words from author output; only the master assigns verdicts, from receipts",
        "wiki/kernel_experiments/program.md § Invariants (Roles)"}},
      {"numbers_without_receipt",
       {"cite the saved kgate receipt the number comes from, or drop the number",
        ".claude/skills/author-kernel/SKILL.md § Output contract (receipt column)"}},
      {"commit_grammar",
       {"reword the commit as candN(<family> vNNN): <what> — <signal>",
        "wiki/kernel_experiments/program.md § Discipline (commit grammar)"}},
      {"loaded_line",
       {"read BRIEFS.md, concepts/pallas-kernel.md and the class page, then add the loaded: line "
        "first",
        ".claude/agents/process-auditor.md § Kernel checks (5)"}},
      {"ledger_vs_commits",
       {"give every ledger row its candN commit and every candN commit its ledger row",
        ".claude/agents/process-auditor.md § Kernel checks (2)"}},
      {"plan_coverage",
       {"run the plan item or record it as abandoned with a reason before finishing",
        "wiki/kernel_experiments/program.md § Stop rule"}},
      {"stub_order",
       {"file a new stub and re-run: candidates must come after the pre-registered stub",
        "wiki/kernel_experiments/program.md § Invariants (Stub-first)"}},
      {"receipt_invalid",
       {"cite the receipt kgate actually wrote; an edited or missing receipt voids the row",
        ".claude/agents/process-auditor.md § Kernel checks (1)"}},
      {"supported_without_pass",
       {"relabel: supported needs a full PASS receipt that fired and meets the bar",
        ".claude/agents/process-auditor.md § Kernel checks (6)"}},
  };
  return t;
}

std::string trim(std::string s) {
  size_t a = s.find_first_not_of(" \t\r\n");
  size_t b = s.find_last_not_of(" \t\r\n");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

bool empty_cell(const std::string& cell) {
  std::string c = trim(cell);
  return c.empty() || c == "-" || c == "—" || c == "n/a" || c == "none";
}

bool has_digit(const std::string& s) {
  return std::any_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The candidate ledger inside a written page or a finish payload: from the `loaded:` line (or the
// table header when that line is missing) to the end of the table.
std::optional<std::string> extract_ledger(std::string_view text) {
  size_t pos = 0, table = std::string_view::npos, loaded = std::string_view::npos;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    std::string line = trim(std::string(
        text.substr(pos, eol == std::string_view::npos ? std::string_view::npos : eol - pos)));
    std::string low = line;
    std::transform(low.begin(), low.end(), low.begin(), ::tolower);
    if (low.rfind("loaded:", 0) == 0)
      loaded = pos;
    else if (low.rfind("| candidate", 0) == 0 || low.rfind("|candidate", 0) == 0) {
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
    if (!h.artifact_dir.empty()) ctx_.receipt_dirs.push_back(h.artifact_dir);
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
      case EventKind::Command:
      case EventKind::Subagent:
      case EventKind::Violation:
        break;
    }
  }

  void finish(const FileStats& stats) {
    if (stats.chain && policy_.enabled("chain_integrity") && !stats.chain->ok)
      add("chain_integrity",
          "transcript chain broken at line " + std::to_string(stats.chain->broken_line) + ": " +
              stats.chain->reason,
          stats.chain->broken_line);
    if (stats.format == Format::Unknown)
      throw Error(
          file_.string() +
          " is in no transcript format kdispatch audit reads (kdispatch, Claude Code, Codex)");
    if (!stats.chain && policy_.enabled("chain_integrity"))
      note_unchecked("chain_integrity",
                     std::string(format_name(stats.format)) + " logs carry no hash chain");
    if (stats.torn_last_line && policy_.enabled("transcript_torn"))
      add("transcript_torn",
          "the last line is torn (no newline, " +
              std::string(stats.chain ? "chain unverifiable there" : "not parsed") + ")",
          stats.lines);
    if (stats.malformed > 0 && policy_.enabled("transcript_torn"))
      add("transcript_torn",
          std::to_string(stats.malformed) + " malformed line(s) skipped, first at line " +
              std::to_string(stats.malformed_lines.front()),
          stats.malformed_lines.front());
    if (ctx_.worktree.empty()) note_unchecked("write_outside_worktree", "no worktree");
    if (ctx_.references.empty()) note_unchecked("reference_write", "no reference module");
    if (ctx_.no_peek.empty()) note_unchecked("no_peek_read", "no no-peek globs");
    ledger_rules();
    stub_rule();
  }

  // Shared with run-directory outcomes: a `supported` claim needs a full, firing PASS at the bar.
  void check_supported(const std::string& receipt, std::optional<double> bar, uint64_t line,
                       const std::string& what) {
    if (!policy_.enabled("supported_without_pass")) return;
    if (empty_cell(receipt)) {
      add("supported_without_pass", what + " is supported without a receipt", line);
      return;
    }
    const contract::ReceiptCheck* r = receipt_check(receipt);
    if (!r) {
      add("supported_without_pass",
          what + " is supported but its receipt " + quote(receipt) + " does not resolve", line);
      return;
    }
    if (!r->ok) {
      add("supported_without_pass",
          what + " is supported but its receipt " + quote(receipt) + " does not validate", line);
      return;
    }
    if (r->verdict != "PASS")
      add("supported_without_pass",
          what + " is supported but receipt " + quote(receipt) + " says " + r->verdict, line);
    else if (r->mode == "screen")
      add("supported_without_pass",
          what + " is supported from a screen receipt " + quote(receipt) +
              " (a lead, not a verdict)",
          line);
    else if (r->custom_call_count && *r->custom_call_count == 0)
      add("supported_without_pass",
          what + " is supported but receipt " + quote(receipt) +
              " shows 0 custom calls (the kernel did not fire)",
          line);
    else if (!r->speedup)
      add("supported_without_pass",
          what + " is supported but receipt " + quote(receipt) + " has no speedup", line);
    else if (*r->speedup <= 1.0 || (bar && *r->speedup < *bar))
      add("supported_without_pass",
          what + " is supported with speedup " + std::to_string(*r->speedup) +
              (bar ? " below the bar " + std::to_string(*bar) : " not above 1.0"),
          line);
  }

  const AuditContext& context() const { return ctx_; }

 private:
  void add(const std::string& rule, std::string defect, uint64_t line) {
    auto& n = per_rule_[rule];
    if (++n > policy_.max_findings_per_rule) {
      ++report_.suppressed[rule];
      return;
    }
    const auto& text = rule_texts().at(rule);
    Finding f;
    f.rule = rule;
    f.severity = policy_.rules.at(rule).severity;
    f.defect = std::move(defect);
    f.evidence = file_.string() + (line ? ":" + std::to_string(line) : "");
    f.correct = text.correct;
    f.reread = text.reread;
    report_.findings.push_back(std::move(f));
  }

  void note_unchecked(const std::string& rule, const std::string& why) {
    if (policy_.enabled(rule)) report_.not_checked.emplace(rule, why);
  }

  bool is_reference(const std::string& path) const {
    for (const auto& ref : ctx_.references)
      if (path_within(path, resolve_path(ctx_.worktree, ref))) return true;
    return false;
  }

  void on_write(const Event& e) {
    bool absolute = !e.path.empty() && e.path[0] == '/';
    if (policy_.enabled("write_outside_worktree") && absolute && !ctx_.worktree.empty() &&
        !path_within(e.path, resolve_path("", ctx_.worktree))) {
      // A wiki kept under a scratch root (/tmp) is still the wiki: the allowed roots do not
      // cover a write beside the worktree into its pages.
      bool allowed = false;
      if (ctx_.wiki.empty() || !path_within(e.path, ctx_.wiki)) {
        for (const auto& root : policy_.allowed_write_roots)
          allowed = allowed || path_within(e.path, root);
      }
      if (!allowed && written_outside_.insert(e.path).second)
        add("write_outside_worktree",
            "write outside the worktree " + quote(ctx_.worktree) + ": " + quote(e.path) + " (" +
                e.tool + ")",
            e.line);
    }
    if (policy_.enabled("reference_write") && is_reference(e.path))
      add("reference_write",
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
    if (policy_.enabled("no_peek_read") && !ctx_.no_peek.empty() &&
        (no_peek_match(e.path) || no_peek_match(e.path + "/")))
      add("no_peek_read", "read of no-peek path " + quote(e.path) + " (" + e.tool + ")", e.line);
  }

  void on_text(const std::string& text, const Event& e) {
    if (e.role == "verifier" || text.empty()) return;
    if (policy_.enabled("verdict_language"))
      if (auto hit = find_verdict_language(text, policy_))
        add("verdict_language", "author output grades itself: \"" + *hit + "\"", e.line);
    if (policy_.enabled("numbers_without_receipt") && e.kind == EventKind::ModelText)
      if (auto hit = find_unreceipted_speedup(text))
        add("numbers_without_receipt", "speedup claimed with no receipt cited: \"" + *hit + "\"",
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
      if (!other && policy_.enabled("commit_grammar"))
        add("commit_grammar",
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

  const contract::ReceiptCheck* receipt_check(const std::string& cited) {
    auto it = receipts_.find(cited);
    if (it != receipts_.end()) return it->second ? &*it->second : nullptr;
    std::vector<fs::path> candidates;
    fs::path p(cited);
    if (p.is_absolute()) {
      candidates.push_back(p);
    } else {
      for (const auto& d : ctx_.receipt_dirs)
        candidates.push_back(fs::path(d) / p);
      if (!ctx_.worktree.empty()) candidates.push_back(fs::path(ctx_.worktree) / p);
      candidates.push_back(file_.parent_path() / p);
    }
    std::optional<contract::ReceiptCheck> found;
    for (const auto& c : candidates) {
      std::error_code ec;
      if (fs::is_regular_file(c, ec)) {
        found = contract::validate_receipt(c);
        break;
      }
    }
    auto& slot = receipts_[cited];
    slot = std::move(found);
    return slot ? &*slot : nullptr;
  }

  void ledger_rules() {
    std::string text = !finish_ledger_.empty() ? finish_ledger_ : page_ledger_;
    uint64_t line = !finish_ledger_.empty() ? finish_line_ : page_ledger_line_;
    if (text.empty()) {
      for (const char* rule :
           {"loaded_line", "ledger_vs_commits", "plan_coverage", "receipt_invalid"})
        note_unchecked(rule, "no candidate ledger in " + file_.filename().string());
      return;
    }
    contract::Ledger ledger = contract::parse_ledger(text);
    if (policy_.enabled("loaded_line") && !ledger.has_loaded_line)
      add("loaded_line", "the candidate ledger does not start with the loaded: [...] attestation",
          line);
    std::set<std::string> rows;
    std::unique_ptr<RepoCommits> repo;
    if (!ctx_.repository.empty() && policy_.enabled("ledger_vs_commits")) {
      try {
        repo = std::make_unique<RepoCommits>(ctx_.repository, ctx_.branch);
      } catch (const Error& e) {
        report_.not_checked.emplace("ledger_vs_commits",
                                    std::string("repository unusable: ") + e.what());
      }
    }
    for (const auto& row : ledger.rows) {
      rows.insert(row.candidate);
      if (policy_.enabled("receipt_invalid") && !empty_cell(row.receipt)) {
        const contract::ReceiptCheck* r = receipt_check(trim(row.receipt));
        if (!r)
          add("receipt_invalid",
              row.candidate + " cites receipt " + quote(trim(row.receipt)) +
                  ", which does not exist",
              line);
        else if (!r->ok)
          add("receipt_invalid",
              row.candidate + " cites receipt " + quote(trim(row.receipt)) +
                  ", which does not validate: " + r->problems.front(),
              line);
      }
      if (policy_.enabled("numbers_without_receipt") && empty_cell(row.receipt) &&
          (has_digit(row.p50_ms) || has_digit(row.vs_naive)))
        add("numbers_without_receipt",
            row.candidate + " reports p50 " + quote(trim(row.p50_ms)) + " / vs naive " +
                quote(trim(row.vs_naive)) + " with no receipt",
            line);
      if (!policy_.enabled("ledger_vs_commits") || empty_cell(row.sha)) continue;
      if (repo) {
        RepoCommit c = repo->lookup(trim(row.sha));
        if (!c.found)
          add("ledger_vs_commits",
              row.candidate + " cites commit " + quote(trim(row.sha)) +
                  ", which is not in the repository",
              line);
        else if (!c.on_branch)
          add("ledger_vs_commits",
              row.candidate + " cites commit " + quote(trim(row.sha)) +
                  ", which is not on the candidate branch",
              line);
        else {
          contract::CommitSubject s;
          if (!contract::parse_commit_subject(c.subject, &s) || s.candidate != row.candidate)
            add("ledger_vs_commits",
                row.candidate + " cites commit " + quote(trim(row.sha)) + " whose subject is " +
                    quote(c.subject),
                line);
        }
      } else if (!commit_candidates_.count(row.candidate) && !commit_candidates_.empty()) {
        add("ledger_vs_commits",
            row.candidate + " has a ledger row with commit " + quote(trim(row.sha)) +
                " but no such candidate commit in the transcript",
            line);
      }
    }
    if (policy_.enabled("ledger_vs_commits"))
      for (const auto& [cand, at] : commit_candidates_)
        if (!rows.count(cand))
          add("ledger_vs_commits", "commit for " + cand + " has no ledger row", at);
    plan_rule(rows, line);
  }

  void plan_rule(const std::set<std::string>& rows, uint64_t line) {
    if (ctx_.plan.empty()) {
      note_unchecked("plan_coverage", "no candidate plan");
      return;
    }
    if (!policy_.enabled("plan_coverage")) return;
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
        add("plan_coverage", "plan item " + item + " was neither run nor abandoned with a reason",
            line);
  }

  void stub_rule() {
    if (ctx_.stub_committed.empty()) {
      note_unchecked("stub_order", "no stub commit time");
      return;
    }
    auto stub = parse_rfc3339(ctx_.stub_committed);
    if (!stub) {
      note_unchecked("stub_order",
                     "stub commit time " + quote(ctx_.stub_committed) + " is not an RFC 3339 time");
      return;
    }
    if (!policy_.enabled("stub_order")) return;
    if (first_commit_ && first_commit_->first <= *stub) {
      add("stub_order",
          "the first candidate commit is not later than the stub commit (" + ctx_.stub_committed +
              ")",
          first_commit_->second);
    } else if (untimed_commit_line_) {
      // It may have been the first: the order cannot be shown to hold.
      note_unchecked("stub_order", "the candidate commit at line " +
                                       std::to_string(untimed_commit_line_) +
                                       " has no RFC 3339 time");
    }
  }

  fs::path file_;
  AuditContext ctx_;
  const AuditPolicy& policy_;
  AuditReport& report_;
  std::map<std::string, size_t> per_rule_;
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
  for (const auto& [id, rule] : policy.rules)
    if (rule.enabled && id != "chain_integrity" && id != "transcript_torn") return true;
  return false;
}

// A run directory's outcome.json: a `supported` verdict is checked against its receipt.
void audit_outcome(const fs::path& run, FileAudit& audit) {
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
  audit.check_supported(receipt, bar, 0, "run outcome " + quote(outcome.string()));
}

}  // namespace

AuditReport run_audit(const std::vector<fs::path>& inputs, const AuditContext& flags,
                      const AuditPolicy& policy) {
  AuditReport report;
  ImportOptions options;
  options.check_chain = policy.enabled("chain_integrity");
  options.want_events = wants_events(policy);
  for (const auto& input : inputs) {
    std::vector<fs::path> files = expand(input);
    for (const auto& file : files) {
      FileAudit audit(file, flags, policy, report);
      ImportSink sink;
      sink.event = [&](const Event& e) { audit.event(e); };
      sink.header = [&](const HeaderInfo& h) { audit.header(h); };
      sink.cwd = [&](const std::string& d) { audit.cwd(d); };
      FileStats stats = import_file(file, options, sink);
      audit.finish(stats);
      if (file.filename() == "transcript.jsonl" && file.parent_path().filename() == "author")
        audit_outcome(file.parent_path().parent_path(), audit);
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
