// The experiment stub (K3): pre-registered front matter, the four labeled hypothesis
// paragraphs, the K1 diagnosis and the candidate plan.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "briefs/markdown.h"
#include "briefs/page.h"
#include "briefs/problem.h"

namespace kd::briefs {

struct Stub {
  std::string path;    // wiki-relative
  std::string commit;  // the wiki commit it was read from
  std::string status, verdict, activity, intervention_class, category, class_page, lever_queue,
      variant, created;
  std::optional<double> bar;  // numeric minimum speedup
  std::string bar_text;       // as written
  std::string hypothesis, mechanism, predicted_signal, falsification;
  std::string k1_title;  // heading of the K1 section
  std::string k1;        // its text
  std::vector<PlanItem> plan;
};

// Reads every field; every missing or malformed one is appended to `problems` under the
// checklist item it breaks ("diagnosis", "falsification bar", "activity", "candidate plan", ...).
Stub parse_stub(const Page& page, Problems& problems);

}  // namespace kd::briefs
