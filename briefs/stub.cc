#include "briefs/stub.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>

#include "common/errors.h"

namespace kd::briefs {
namespace {

std::string joined(const FrontValue* v) {
  if (!v) return {};
  if (!v->is_list) return v->scalar;
  std::string out;
  for (const auto& i : v->items)
    out += (out.empty() ? "" : "; ") + i;
  return out;
}

bool one_of(const std::string& v, std::initializer_list<const char*> allowed) {
  return std::any_of(allowed.begin(), allowed.end(), [&](const char* a) { return v == a; });
}

}  // namespace

Stub parse_stub(const Page& page, Problems& problems) {
  Stub s;
  s.path = page.source;
  const FrontMatter& f = page.front;
  s.status = joined(f.find("status"));
  s.verdict = joined(f.find("verdict"));
  s.activity = joined(f.find("activity"));
  s.intervention_class = joined(f.find("intervention_class"));
  s.category = joined(f.find("category"));
  s.class_page = joined(f.find_any({"class page", "class_page"}));
  s.lever_queue = joined(f.find_any({"lever queue", "lever_queue"}));
  s.variant = joined(f.find("variant"));
  s.created = joined(f.find("created"));
  s.bar_text = joined(f.find("bar"));
  const std::string& src = page.source;

  if (s.status != "in_progress")
    problems.push_back({"stub", src + ": status is " + quote(s.status) +
                                    "; only an in_progress experiment is dispatched"});
  if (!s.activity.empty() && !one_of(s.activity, {"optimization", "capability-eval"}))
    problems.push_back({"activity", src + ": activity " + quote(s.activity) +
                                        " is not optimization or capability-eval"});
  else if (s.activity.empty())
    problems.push_back({"activity", src + " has no activity"});
  if (s.intervention_class.empty())
    problems.push_back({"diagnosis", src + " has no intervention_class"});
  else if (!one_of(s.intervention_class, {"refute", "flag", "xla-rewrite", "kernel-authored"}))
    problems.push_back({"diagnosis", src + ": intervention_class " + quote(s.intervention_class) +
                                         " is not refute, flag, xla-rewrite or kernel-authored"});
  if (s.variant.empty()) problems.push_back({"stub", src + " has no variant"});

  if (s.bar_text.empty()) {
    problems.push_back({"falsification bar", src + " has no numeric bar"});
  } else {
    char* end = nullptr;
    double v = std::strtod(s.bar_text.c_str(), &end);
    if (end != s.bar_text.c_str() + s.bar_text.size() || !std::isfinite(v) || v <= 0)
      problems.push_back(
          {"falsification bar", src + ": bar " + quote(s.bar_text) + " is not a positive number"});
    else
      s.bar = v;
  }

  const Section* hyp = page.section("Hypothesis under test");
  struct Label {
    const char* name;
    std::string* out;
    const char* item;
  } labels[] = {{"Hypothesis", &s.hypothesis, "stub"},
                {"Mechanism", &s.mechanism, "stub"},
                {"Predicted signal", &s.predicted_signal, "stub"},
                {"Falsification criterion", &s.falsification, "falsification bar"}};
  if (!hyp) {
    problems.push_back({"stub", src + " has no section \"Hypothesis under test\""});
  } else {
    std::string_view text = page.text(*hyp);
    for (auto& l : labels) {
      auto v = bold_paragraph(text, l.name);
      if (!v || v->empty())
        problems.push_back({l.item, src + ": \"Hypothesis under test\" has no **" +
                                        std::string(l.name) + "** paragraph"});
      else
        *l.out = *v;
    }
  }

  const Section* k1 = page.section_with_prefix("K1");
  if (!k1) {
    problems.push_back({"diagnosis", src + " has no K1 section (the bound diagnosis)"});
  } else {
    s.k1_title = k1->title;
    s.k1 = std::string(page.text(*k1));
    if (s.k1.empty())
      problems.push_back({"diagnosis", src + ": section " + quote(k1->title) + " is empty"});
  }

  const Section* plan = page.section("Candidate plan");
  if (!plan) {
    problems.push_back({"candidate plan", src + " has no section \"Candidate plan\""});
  } else {
    int first = plan->line + 1;
    s.plan = parse_plan(
        std::string_view(page.body).substr(plan->content, plan->end - plan->content), first);
    std::set<std::string> seen;
    for (const auto& item : s.plan) {
      std::string at = src + ":" + std::to_string(item.line) + ": ";
      if (item.id.empty())
        problems.push_back(
            {"candidate plan", at + "item is not \"cand<N>: <what> — predict <signal>\""});
      else if (!seen.insert(item.id).second)
        problems.push_back({"candidate plan", at + item.id + " is listed twice"});
      else if (item.prediction.empty())
        problems.push_back({"candidate plan", at + item.id + " has no prediction"});
    }
    if (s.plan.empty())
      problems.push_back({"candidate plan", src + ": \"Candidate plan\" lists no items"});
  }
  return s;
}

}  // namespace kd::briefs
