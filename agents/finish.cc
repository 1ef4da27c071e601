#include "agents/finish.h"

#include <algorithm>
#include <regex>
#include <set>

#include "common/text.h"
#include "contract/ledger.h"

namespace kd::agents {
namespace {

using json = nlohmann::json;

bool is_sha(const std::string& s) {
  static const std::regex re("^[0-9a-f]{7,40}$");
  return std::regex_match(s, re);
}

bool no_commit(const std::string& s) {
  return s.empty() || s == "-" || s == "—" || s == "none" || s == "n/a";
}

// Verdicts are assigned by kdispatch from receipts; the author reports against the bar only.
std::vector<std::string> verdict_words(const std::string& text) {
  static const std::regex re(R"(\b(supported|refuted|inconclusive|verdict)\b)", std::regex::icase);
  std::set<std::string> found;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator();
       ++it) {
    found.insert(lower(it->str()));
  }
  return {found.begin(), found.end()};
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v)
    out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

std::vector<std::string> check_finish(const json& in, const FinishContext& ctx) {
  if (ctx.check) return ctx.check(in);
  std::vector<std::string> p;
  std::string ledger_text = in.value("ledger", "");
  contract::Ledger ledger = contract::parse_ledger(ledger_text);
  for (const auto& prob : ledger.problems)
    p.push_back("ledger: " + prob);

  std::set<std::string> plan(ctx.plan_ids.begin(), ctx.plan_ids.end());
  std::set<std::string> in_ledger;
  std::vector<std::string> shas;
  for (const auto& row : ledger.rows) {
    std::string at = "ledger line " + std::to_string(row.line) + " (" + row.candidate + ")";
    in_ledger.insert(row.candidate);
    if (!plan.empty() && !plan.count(row.candidate)) {
      p.push_back(at + ": " + row.candidate +
                  " is not a candidate plan item (plan: " + join(ctx.plan_ids) + ")");
    }
    if (!no_commit(row.sha)) {
      if (!is_sha(row.sha)) {
        p.push_back(at + ": committed SHA \"" + row.sha +
                    "\" is not a hex commit id (7-40 lowercase hex, or - for an attempt that was "
                    "never committed)");
      } else {
        shas.push_back(row.sha);
        if (ctx.commit_exists && !ctx.commit_exists(row.sha)) {
          p.push_back(at + ": commit " + row.sha + " does not exist on the experiment branch");
        }
      }
    }
    if (!row.receipt.empty() && !no_commit(row.receipt) && ctx.receipt_exists &&
        !ctx.receipt_exists(row.receipt)) {
      p.push_back(at + ": receipt " + row.receipt +
                  " is not a file in your artifact dir (cite it by its path relative to the wiki)");
    }
  }

  std::map<std::string, std::string> abandoned;
  for (const auto& a : in.value("abandoned", json::array())) {
    std::string id = a.value("candidate", "");
    std::string reason = a.value("reason", "");
    if (!plan.empty() && !plan.count(id)) {
      p.push_back("abandoned: " + id +
                  " is not a candidate plan item (plan: " + join(ctx.plan_ids) + ")");
    }
    abandoned[id] = reason;
  }
  // The plan is the stop rule: every item ran (has a ledger row) or was abandoned with a reason.
  for (const auto& id : ctx.plan_ids) {
    if (in_ledger.count(id)) continue;
    if (abandoned.count(id)) continue;
    p.push_back("candidate plan item " + id +
                " has no ledger row and is not listed in abandoned with a reason: run it, or add "
                "{\"candidate\":\"" +
                id + "\",\"reason\":\"...\"} to abandoned");
  }

  const json fc = in.value("final_candidate", json::object());
  std::string path = fc.value("path", "");
  std::string sha = fc.value("sha", "");
  if (!path.empty() && (path[0] == '/' || path.find("..") != std::string::npos)) {
    p.push_back("final_candidate.path must be relative to the work dir without \"..\", got \"" +
                path + "\"");
  }
  if (!is_sha(sha)) {
    p.push_back("final_candidate.sha \"" + sha + "\" is not a hex commit id");
  } else if (!ledger.rows.empty()) {
    bool cited = std::any_of(shas.begin(), shas.end(), [&](const std::string& s) {
      return s.rfind(sha, 0) == 0 || sha.rfind(s, 0) == 0;
    });
    if (!cited)
      p.push_back("final_candidate.sha " + sha + " is not the committed SHA of any ledger row");
  }

  std::string prose = ledger_text + "\n" + in.value("mechanism", "");
  for (const auto& b : in.value("blockers", json::array())) {
    if (b.is_string()) prose += "\n" + b.get<std::string>();
  }
  if (auto words = verdict_words(prose); !words.empty()) {
    p.push_back("verdict language (" + join(words) +
                ") in the author output: report results against the bar only; verdicts come from "
                "verification");
  }
  if (ctx.compliance_required && in.value("compliance", "").empty()) {
    p.push_back("compliance: the activity carried constraints; confirm each was obeyed");
  }
  return p;
}

std::string finish_rejection(const std::vector<std::string>& problems) {
  std::string msg = "finish rejected; fix these and call finish again:";
  for (const auto& s : problems)
    msg += "\n- " + s;
  return msg;
}

}  // namespace kd::agents
