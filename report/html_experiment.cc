#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/files.h"
#include "report/html.h"
#include "report/html_text.h"
#include "report/page_shell.h"

namespace kd::report {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

constexpr size_t kFoldBytes = 1500, kFoldLines = 24;
constexpr size_t kMaxShown = 200 * 1024;  // a longer content is cut (the file keeps it whole)

std::string kv(const std::string& key, const std::string& value_html) {
  return "<dt>" + escape(key) + "</dt><dd>" + value_html + "</dd>";
}

// Preformatted text, folded behind a summary when long, appended to `o`.
void append_pre(std::string& o, const std::string& text, bool fold_long = true) {
  const size_t shown = std::min(text.size(), kMaxShown);
  const size_t lines = std::count(text.begin(), text.end(), '\n') + 1;
  const bool fold = fold_long && (text.size() > kFoldBytes || lines > kFoldLines);
  if (fold)
    o += "<details><summary>" + std::to_string(lines) + " lines, " + std::to_string(text.size()) +
         " bytes</summary>";
  o += "<pre>";
  append_escaped(o, std::string_view(text).substr(0, shown));
  if (shown < text.size())
    o += "\n[cut at " + std::to_string(kMaxShown / 1024) + " KiB of " +
         std::to_string(text.size()) + " bytes]";
  o += "</pre>";
  if (fold) o += "</details>";
}

std::string pre_block(const std::string& text, bool fold_long = true) {
  std::string o;
  append_pre(o, text, fold_long);
  return o;
}

// A file of the run, folded; says so when it is not there.
std::string file_section(const std::string& title, const fs::path& path, bool open) {
  std::string o = "<h2>" + escape(title) + "</h2>";
  std::error_code ec;
  if (!fs::exists(path, ec))
    return o + "<p class=\"muted\">no " + escape(path.filename().string()) + "</p>";
  try {
    std::string text = read_file(path);
    if (open) return o + pre_block(text, false);
    return o + "<details><summary>" + escape(path.filename().string()) + " (" +
           std::to_string(text.size()) + " bytes)</summary>" + pre_block(text, false) +
           "</details>";
  } catch (const std::exception& e) {
    return o + "<p class=\"o-error\">" + escape(e.what()) + "</p>";
  }
}

json load_json(const fs::path& path, std::string& problem) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return nullptr;
  try {
    json j = json::parse(read_file(path), nullptr, false);
    if (j.is_discarded()) problem = path.filename().string() + " is not JSON";
    return j.is_discarded() ? json() : j;
  } catch (const std::exception& e) {
    problem = e.what();
    return nullptr;
  }
}

std::string text_of(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "-";
  return v.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string ledger_section(const fs::path& run_dir) {
  std::string o = "<h2>Ledger</h2>", problem;
  json f = load_json(run_dir / "author" / "finish.json", problem);
  if (!problem.empty()) return o + "<p class=\"o-error\">" + escape(problem) + "</p>";
  if (!f.is_object())
    return o + "<p class=\"muted\">no finish: the author did not file a ledger</p>";
  o += pre_block(f.contains("ledger") ? text_of(f["ledger"]) : "(no ledger)", false);
  if (f.contains("abandoned") && f["abandoned"].is_array() && !f["abandoned"].empty()) {
    o += "<h3>Abandoned</h3><ul>";
    for (const auto& a : f["abandoned"])
      o += "<li>" +
           escape(a.is_object() ? a.value("candidate", "") + ": " + a.value("reason", "")
                                : text_of(a)) +
           "</li>";
    o += "</ul>";
  }
  return o;
}

std::string receipt_section(const fs::path& run_dir) {
  std::string o = "<h2>Receipt</h2>", problem;
  json out = load_json(run_dir / "outcome.json", problem);
  if (!problem.empty()) return o + "<p class=\"o-error\">" + escape(problem) + "</p>";
  if (!out.is_object() || !out.contains("receipt") || !out["receipt"].is_object())
    return o + "<p class=\"muted\">no outcome.json yet: nothing measured</p>";
  const json& r = out["receipt"];
  o += "<dl class=\"kv receipt\">";
  for (const char* k : {"path", "sha256", "ok", "verdict", "speedup"})
    if (r.contains(k)) o += kv(k, escape(text_of(r[k])));
  if (r.contains("p50_ms") && r["p50_ms"].is_object()) {
    o += kv("p50 baseline (ms)", escape(text_of(r["p50_ms"].value("baseline", json()))));
    o += kv("p50 candidate (ms)", escape(text_of(r["p50_ms"].value("candidate", json()))));
  }
  if (r.contains("problems") && r["problems"].is_array())
    for (const auto& p : r["problems"])
      o += kv("problem", "<span class=\"o-error\">" + escape(text_of(p)) + "</span>");
  if (out.contains("verifier") && out["verifier"].is_object()) {
    const json& v = out["verifier"];
    o += kv("verifier chip", escape(text_of(v.value("chip", json()))));
    o += kv("verify command", "<code>" + escape(text_of(v.value("argv", json()))) + "</code>");
  }
  return o + "</dl>";
}

std::string audit_section(const fs::path& run_dir) {
  std::string o = "<h2>Audit</h2>", problem;
  json a = load_json(run_dir / "audit.json", problem);
  if (!problem.empty()) return o + "<p class=\"o-error\">" + escape(problem) + "</p>";
  if (!a.is_object())
    return o +
           "<p class=\"muted\">not audited (no audit.json; run kdispatch audit RUN_DIR --json)</p>";
  if (a.contains("summary")) o += "<p>" + escape(text_of(a["summary"])) + "</p>";
  if (!a.contains("findings") || !a["findings"].is_array() || a["findings"].empty())
    return o + "<p class=\"chain-ok\">no findings</p>";
  o += "<div class=\"scroll\"><table class=\"findings\"><thead><tr><th>severity</th><th>rule</th>"
       "<th>defect</th><th>evidence</th></tr></thead><tbody>";
  for (const auto& f : a["findings"]) {
    if (!f.is_object()) continue;
    std::string sev = f.value("severity", "");
    o += "<tr><td class=\"" +
         std::string(sev == "VIOLATION" || sev == "FABRICATION" ? "o-error" : "") + "\">" +
         escape(sev) + "</td><td>" + escape(f.value("rule", "")) + "</td><td>" +
         escape(text_of(f.value("defect", json()))) + "</td><td>" +
         escape(text_of(f.value("evidence", json()))) + "</td></tr>";
  }
  return o + "</tbody></table></div>";
}

std::string budget_meta(const Entry& e) {
  std::string m = fmt_tokens(e.input_tokens + e.output_tokens) + " tokens";
  if (e.cache_read_tokens || e.cache_write_tokens)
    m += " (cache " + fmt_tokens(e.cache_read_tokens) + " read, " +
         fmt_tokens(e.cache_write_tokens) + " written)";
  return m + ", " + fmt_cost(e.cost_usd) + " so far";
}

// One record of the viewer, appended to `o` (pages are built in one string).
void append_entry(std::string& o, const Entry& e) {
  std::string cls, head;
  switch (e.kind) {
    case Entry::Kind::Header:
      cls = "header";
      head = "session";
      break;
    case Entry::Kind::Request:
      cls = "request";
      head = "request, turn " + std::to_string(e.turn);
      break;
    case Entry::Kind::Response:
      cls = "response";
      head = "model, turn " + std::to_string(e.turn);
      break;
    case Entry::Kind::ToolCall:
      cls = "call";
      head = "tool " + e.call.name;
      break;
    case Entry::Kind::Violation:
      cls = "violation";
      head = "sandbox denial";
      break;
    case Entry::Kind::Note:
      cls = "note";
      head = "note";
      break;
    case Entry::Kind::End:
      cls = "end";
      head = "end";
      break;
    case Entry::Kind::Unknown:
      cls = "unknown";
      head = "unknown record";
      break;
    case Entry::Kind::Unreadable:
      cls = "bad";
      head = "unreadable line";
      break;
  }
  o += "<div class=\"e " + cls + (e.highlight ? " hl" : "") + "\" data-line=\"" +
       std::to_string(e.line) + "\"><div class=\"meta\">";
  append_escaped(o, head);
  o += " \xC2\xB7 line " + std::to_string(e.line);
  if (!e.ts.empty()) {
    o += " \xC2\xB7 ";
    append_escaped(o, e.ts);
  }
  if (e.kind == Entry::Kind::Response) o += " \xC2\xB7 " + escape(budget_meta(e));
  o += "</div>";
  switch (e.kind) {
    case Entry::Kind::Response:
      if (!e.text.empty()) append_pre(o, e.text);
      o += "<div class=\"meta\">stop: " + escape(e.detail.empty() ? "-" : e.detail) + ", " +
           std::to_string(e.calls.size()) + " tool call" + (e.calls.size() == 1 ? "" : "s") +
           "</div>";
      break;
    case Entry::Kind::ToolCall: {
      const ToolCallEntry& c = e.call;
      o += "<div class=\"meta\">arguments</div>";
      append_pre(o, c.input);
      if (!c.has_result) {
        o += "<div class=\"meta o-error\">no result recorded</div>";
        break;
      }
      std::string status = c.not_run ? "refused, not run" : c.is_error ? "error" : "ok";
      if (c.exit_code) status += ", exit " + std::to_string(*c.exit_code);
      if (c.timed_out) status += ", timed out";
      o += "<div class=\"meta" + std::string(c.is_error || c.not_run ? " o-error" : "") +
           "\">result: " + escape(status) + "</div>";
      append_pre(o, c.result);
      break;
    }
    default:
      if (!e.text.empty()) o += "<div>" + escape(e.text) + "</div>";
      if (!e.detail.empty()) append_pre(o, e.detail);
  }
  o += "</div>\n";
}

}  // namespace

std::string render_transcript_html(const TranscriptView& v, const std::string& id) {
  std::string o;
  size_t estimate = 4096;
  for (const auto& e : v.entries)
    estimate += 400 + e.text.size() + e.detail.size() + e.call.input.size() + e.call.result.size();
  o.reserve(estimate + estimate / 4);
  const bool ok = v.chain_ok;
  o += "<p class=\"chain " + std::string(ok ? "chain-ok" : "chain-bad") + "\" id=\"" + escape(id) +
       "-chain\" data-chain=\"" +
       (ok          ? "intact"
        : v.missing ? "missing"
                    : "broken") +
       "\">chain: " + escape(chain_status(v)) + "</p>";
  if (v.missing || !v.problem.empty()) return o;
  o += "<p class=\"muted\">" + escape(v.model) + " \xC2\xB7 " + std::to_string(v.turns) +
       " turns \xC2\xB7 " + std::to_string(v.tool_calls) + " tool calls \xC2\xB7 " +
       std::to_string(v.violations) + " sandbox denials \xC2\xB7 " +
       escape(fmt_tokens(v.input_tokens)) + " in / " + escape(fmt_tokens(v.output_tokens)) +
       " out \xC2\xB7 " + escape(fmt_cost(v.cost_usd)) +
       (v.end_reason.empty() ? " \xC2\xB7 no end record"
                             : " \xC2\xB7 ended: " + escape(v.end_reason)) +
       "</p>";
  if (id == "turns")
    o +=
        "<div class=\"controls\"><label><input type=\"checkbox\" id=\"only-hl\"> only refusals and "
        "denials</label></div>";
  o += "<div class=\"turns\" id=\"" + escape(id) + "\">\n";
  for (const auto& e : v.entries)
    append_entry(o, e);
  o += "</div>";
  return o;
}

std::string render_experiment(const Report& r, const Campaign& c, const ExperimentRow& e,
                              const TranscriptView& author, const TranscriptView* verifier) {
  (void)r;
  std::string b = "<nav><a href=\"../index.html\">\xE2\x86\x90 report</a></nav><h1>";
  append_escaped(b, e.key);
  b += "</h1><p class=\"muted\">campaign " + escape(c.name) + (c.running ? " (running)" : "") +
       "</p>";
  b += "<section class=\"card\"><dl class=\"kv summary\">";
  b += kv("outcome", "<span class=\"badge o-" + escape(e.outcome) + "\" id=\"outcome\">" +
                         escape(e.outcome) + "</span>");
  for (const auto& why : e.reasons)
    b += kv("because", escape(why));
  b += kv("hypothesis", escape(e.hypothesis.empty() ? "-" : e.hypothesis));
  b += kv("bar", e.bar ? escape(fmt_fixed(*e.bar, 3) + "x") : "-");
  b += kv("speedup", escape(fmt_speedup(e.speedup)));
  b += kv("receipt verdict", escape(e.receipt_verdict.empty() ? "-" : e.receipt_verdict));
  b += kv("chips", "author " + escape(e.author_chip.empty() ? "-" : e.author_chip) + ", verifier " +
                       escape(e.verifier_chip.empty() ? "-" : e.verifier_chip));
  b += kv("turns", std::to_string(e.turns));
  b += kv("tokens",
          escape(fmt_tokens(e.input_tokens) + " in, " + fmt_tokens(e.output_tokens) + " out"));
  b += kv("cost", escape(fmt_cost(e.cost_usd)));
  b += kv("commits", std::to_string(e.commits));
  b += kv("sandbox denials", std::to_string(e.denials));
  b += kv("run directory", "<code>" + escape(e.run_dir.string()) + "</code>");
  for (const auto& p : e.problems)
    b += kv("problem", "<span class=\"o-error\">" + escape(p) + "</span>");
  b += "</dl></section>";
  if (e.run_dir.empty()) {
    b += "<p class=\"muted\">the journal names no run directory for this experiment</p>";
    return html_page(e.key, b);
  }
  b += receipt_section(e.run_dir);
  b += audit_section(e.run_dir);
  b += ledger_section(e.run_dir);
  b += file_section("Filing", e.run_dir / "filing.md", false);
  b += file_section("Brief", e.run_dir / "brief.md", false);
  b += "<h2>Author transcript</h2>" + render_transcript_html(author, "turns");
  if (verifier)
    b += "<h2>Verifier transcript</h2>" + render_transcript_html(*verifier, "verifier-turns");
  return html_page(e.key, b);
}

}  // namespace kd::report
