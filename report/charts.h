// The report's charts, drawn as inline SVG (no library): the chip timeline of a campaign, the
// speedup of each experiment against its bar, and the cost of each experiment. Every label is
// escaped; each bar carries a <title> for its tooltip.
#pragma once

#include <string>
#include <vector>

#include "report/model.h"

namespace kd::report {

// One colour per family, stable within a report.
class FamilyColours {
 public:
  explicit FamilyColours(const Report& r);
  std::string of(const std::string& family) const;
  // The legend: one swatch per family.
  std::string legend_html() const;

 private:
  std::vector<std::string> families_;
};

// One lane per chip (<g class="lane" data-chip="...">); bars for author chip calls and
// verifications (verifications outlined). Bars closer than a pixel are drawn as one, so the SVG
// stays small for a long night.
std::string timeline_svg(const Campaign& c, const FamilyColours& colours);

struct ChartPoint {
  std::string label;  // campaign experiment key
  std::string family;
  double value = 0;
  double bar = 0;  // 0: none
  bool has_value = false;
};

// Speedup per experiment with its bar as a tick; one column per experiment.
std::string speedup_svg(const std::vector<ChartPoint>& points, const FamilyColours& colours);
// Cost per experiment, one column each.
std::string cost_svg(const std::vector<ChartPoint>& points, const FamilyColours& colours);

}  // namespace kd::report
