#include <set>

#include "report/charts.h"
#include "report/html.h"
#include "report/html_text.h"
#include "report/page_shell.h"

namespace kd::report {
namespace {

std::string outcome_badge(const std::string& outcome) {
  std::string cls = outcome;
  for (char& ch : cls)
    if (ch == ' ') ch = '-';
  return "<span class=\"badge o-" + escape(cls) + "\">" + escape(outcome) + "</span>";
}

std::string kv(const std::string& key, const std::string& value_html) {
  return "<dt>" + escape(key) + "</dt><dd>" + value_html + "</dd>";
}

std::string campaign_card(const Campaign& c) {
  std::string o = "<section class=\"card campaign\" data-campaign=\"" + escape(c.name) + "\">";
  o += "<h3>campaign ";
  append_escaped(o, c.name);
  if (c.running) o += " <span class=\"badge o-running\">running</span>";
  o += "</h3><dl class=\"kv\">";
  if (c.run.present) {
    o += kv("command", "<code>" + escape(c.run.command_line) + "</code>");
    o += kv("model", escape(c.run.provider + " " + c.run.model));
    if (!c.run.mode.empty()) o += kv("mode", escape(c.run.mode));
    std::string budgets;
    for (const auto& [k, v] : c.run.budgets.items())
      budgets += (budgets.empty() ? "" : ", ") + k + " " + v.dump();
    o += kv("budgets", escape(budgets.empty() ? "none" : budgets));
  }
  o += kv("start", escape(c.first_ts.empty() ? "-" : c.first_ts));
  o += kv("end", escape(c.running ? "(still running)" : c.last_ts.empty() ? "-" : c.last_ts));
  o += kv("wall", escape(fmt_duration(c.wall_s)));
  o += kv("cost", escape(fmt_cost(c.cost_usd)));
  std::string tokens = fmt_tokens(c.input_tokens) + " in, " + fmt_tokens(c.output_tokens) + " out";
  if (c.cache_read_tokens || c.cache_write_tokens)
    tokens += ", cache " + fmt_tokens(c.cache_read_tokens) + " read / " +
              fmt_tokens(c.cache_write_tokens) + " written";
  o += kv("tokens", escape(tokens));
  std::string counts;
  for (const auto& [outcome, n] : c.outcomes)
    counts += outcome_badge(outcome) + " " + std::to_string(n) + " ";
  o += kv("outcomes", counts.empty() ? "none yet" : counts);
  for (const auto& p : c.problems)
    o += kv("problem", "<span class=\"o-error\">" + escape(p) + "</span>");
  return o + "</dl></section>";
}

std::string num_cell(double v, const std::string& shown) {
  return "<td class=\"num\" data-v=\"" + fmt_fixed(v, 6) + "\">" + escape(shown) + "</td>";
}

std::string experiment_row(const Campaign& c, const ExperimentRow& e, bool show_campaign) {
  std::string o = "<tr class=\"exp-row\" data-outcome=\"" + escape(e.outcome) + "\" data-key=\"" +
                  escape(e.key) + "\">";
  if (show_campaign) o += "<td>" + escape(c.name) + "</td>";
  o += "<td><a href=\"" + escape(e.page) + "\">" + escape(e.family) + "</a></td>";
  o += "<td>" + escape(e.version) + "</td>";
  o += "<td class=\"hyp\">" + escape(e.hypothesis) + "</td>";
  o += e.bar ? num_cell(*e.bar, fmt_fixed(*e.bar, 2) + "x")
             : "<td class=\"num\" data-v=\"0\">-</td>";
  o += "<td class=\"outcome\">" + outcome_badge(e.outcome);
  if (!e.reasons.empty()) {
    o += "<span class=\"why\">" + escape(e.reasons.front());
    if (e.reasons.size() > 1) o += " (+" + std::to_string(e.reasons.size() - 1) + " more)";
    o += "</span>";
  }
  o += "</td>";
  o += num_cell(e.speedup.value_or(0), fmt_speedup(e.speedup));
  o += num_cell(e.turns, std::to_string(e.turns));
  o += num_cell(e.cost_usd, fmt_cost(e.cost_usd));
  std::string audit = !e.audit.problem.empty() ? "unreadable"
                      : !e.audit.present       ? "not audited"
                      : e.audit.findings == 0
                          ? "clean"
                          : std::to_string(e.audit.findings) + " findings (" +
                                std::to_string(e.audit.violations) + " violations)";
  o += "<td data-v=\"" +
       std::to_string(e.audit.present ? e.audit.violations * 1000 + e.audit.findings : -1) +
       "\" class=\"" + (e.audit.violations ? "o-error" : "") + "\">" + escape(audit) + "</td>";
  o += num_cell(e.denials, std::to_string(e.denials));
  o += "<td>" + escape(e.author_chip.empty() ? "-" : e.author_chip) + " \xE2\x86\x92 " +
       escape(e.verifier_chip.empty() ? "-" : e.verifier_chip) + "</td>";
  return o + "</tr>\n";
}

}  // namespace

std::string render_index(const Report& r) {
  FamilyColours colours(r);
  const bool many = r.campaigns.size() > 1;
  std::string b;
  b.reserve(64 * 1024 + r.experiment_count() * 900);
  b += "<header><h1>kdispatch report</h1><p class=\"muted\">";
  append_escaped(b, r.root.string());
  b += " \xC2\xB7 generated " + escape(r.generated) + " \xC2\xB7 " +
       std::to_string(r.campaigns.size()) + " campaign" + (r.campaigns.size() == 1 ? "" : "s") +
       " \xC2\xB7 " + std::to_string(r.experiment_count()) + " experiments</p></header>\n";
  if (r.campaigns.empty()) b += "<p>No campaign under this folder (no journal.jsonl).</p>";
  b += "<h2>Campaigns</h2>";
  for (const auto& c : r.campaigns)
    b += campaign_card(c);

  std::set<std::string> outcomes;
  for (const auto& c : r.campaigns)
    for (const auto& [o, n] : c.outcomes)
      outcomes.insert(o);
  b += "<h2>Experiments</h2><div class=\"controls\"><input id=\"q\" type=\"search\" "
       "placeholder=\"filter: family, hypothesis, cause\xE2\x80\xA6\" aria-label=\"filter\">"
       "<select id=\"outcome\" aria-label=\"outcome\"><option value=\"\">every outcome</option>";
  for (const auto& o : outcomes)
    b += "<option value=\"" + escape(o) + "\">" + escape(o) + "</option>";
  b += "</select><span id=\"shown\" class=\"muted\"></span></div>";
  b += "<div class=\"scroll\"><table id=\"exp\"><thead><tr>";
  if (many) b += "<th>campaign</th>";
  b += "<th>family</th><th>version</th><th>hypothesis</th><th data-type=\"num\">bar</th>"
       "<th>verdict / error</th><th data-type=\"num\">speedup</th><th data-type=\"num\">turns</th>"
       "<th data-type=\"num\">cost</th><th data-type=\"num\">audit</th>"
       "<th data-type=\"num\">denials</th><th>chips</th></tr></thead><tbody>\n";
  for (const auto& c : r.campaigns)
    for (const auto& e : c.experiments)
      b += experiment_row(c, e, many);
  b += "</tbody></table></div>\n";

  b += "<h2>Chip timeline</h2>" + colours.legend_html();
  for (const auto& c : r.campaigns) {
    if (many) b += "<h3>" + escape(c.name) + "</h3>";
    b += timeline_svg(c, colours);
  }

  std::vector<ChartPoint> speed, cost;
  for (const auto& c : r.campaigns) {
    for (const auto& e : c.experiments) {
      std::string label = many ? c.name + " " + e.key : e.key;
      speed.push_back(
          {label, e.family, e.speedup.value_or(0), e.bar.value_or(0), e.speedup.has_value()});
      cost.push_back({label, e.family, e.cost_usd, 0, true});
    }
  }
  b += "<h2>Speedup against the bar</h2><p class=\"muted\">one column per experiment, in table "
       "order; the black tick is its pre-registered bar</p>" +
       speedup_svg(speed, colours);
  b += "<h2>Cost per experiment (USD)</h2>" + cost_svg(cost, colours);
  return html_page("kdispatch report", b);
}

}  // namespace kd::report
