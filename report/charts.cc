#include "report/charts.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "report/html_text.h"

namespace kd::report {
namespace {

constexpr const char* kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
constexpr double kWidth = 1000, kLabel = 64, kLane = 22;

std::string num(double v) {
  return fmt_fixed(v, 1);
}

// One merged bar of a lane.
struct Bar {
  double x0, x1;
  const ChipInterval* first;
  int count;
  double seconds;
  bool mixed;     // more than one experiment
  bool families;  // more than one family: drawn grey
};

}  // namespace

FamilyColours::FamilyColours(const Report& r) {
  std::set<std::string> all;
  for (const auto& c : r.campaigns)
    for (const auto& e : c.experiments)
      all.insert(e.family);
  families_.assign(all.begin(), all.end());
}

std::string FamilyColours::of(const std::string& family) const {
  auto it = std::lower_bound(families_.begin(), families_.end(), family);
  size_t i = it != families_.end() && *it == family ? size_t(it - families_.begin()) : 0;
  return kPalette[i % std::size(kPalette)];
}

std::string FamilyColours::legend_html() const {
  std::string out = "<div class=\"legend\">";
  for (const auto& f : families_) {
    out += "<span><i style=\"background:" + of(f) + "\"></i>";
    append_escaped(out, f);
    out += "</span>";
  }
  return out +
         "<span><i style=\"background:#fff;border:2px solid #1b1f24\"></i>verification "
         "(outlined)</span></div>";
}

std::string timeline_svg(const Campaign& c, const FamilyColours& colours) {
  std::vector<std::string> chips;
  double t0 = 0, t1 = 0;
  for (const auto& i : c.intervals) {
    if (std::find(chips.begin(), chips.end(), i.chip) == chips.end()) chips.push_back(i.chip);
    t0 = t0 == 0 ? i.start : std::min(t0, i.start);
    t1 = std::max(t1, i.end);
  }
  std::sort(chips.begin(), chips.end());
  if (chips.empty())
    return "<p class=\"muted\">no chip was used (no journalled verification, no "
           "run_on_chip call)</p>";
  const double span = std::max(t1 - t0, 1e-3), plot = kWidth - kLabel - 8;
  const double height = kLane * double(chips.size()) + 24;
  auto x_of = [&](double t) { return kLabel + (t - t0) / span * plot; };
  std::string out = "<svg class=\"timeline\" viewBox=\"0 0 " + num(kWidth) + " " + num(height) +
                    "\" role=\"img\" aria-label=\"chip timeline\">";
  for (size_t li = 0; li < chips.size(); ++li) {
    const double y = double(li) * kLane;
    out += "<g class=\"lane\" data-chip=\"" + escape(chips[li]) + "\">";
    out += "<rect x=\"" + num(kLabel) + "\" y=\"" + num(y + 1) + "\" width=\"" + num(plot) +
           "\" height=\"" + num(kLane - 2) + "\" fill=\"#f5f7f9\"/>";
    out += "<text x=\"2\" y=\"" + num(y + 15) + "\">chip ";
    append_escaped(out, chips[li]);
    out += "</text>";
    // Author calls first, then verifications, each in start order; a bar absorbs the next one
    // that begins within a pixel of its end, whoever's it is (a night of 100,000 calls draws as
    // a few hundred bars).
    std::vector<const ChipInterval*> lane;
    for (const auto& i : c.intervals)
      if (i.chip == chips[li]) lane.push_back(&i);
    std::stable_sort(lane.begin(), lane.end(), [](const ChipInterval* a, const ChipInterval* b) {
      return a->kind != b->kind ? a->kind < b->kind : a->start < b->start;
    });
    std::vector<Bar> bars;
    for (const ChipInterval* i : lane) {
      double x0 = x_of(i->start), x1 = std::max(x_of(i->end), x0 + 1);
      if (!bars.empty() && bars.back().first->kind == i->kind && x0 <= bars.back().x1 + 1) {
        Bar& b = bars.back();
        b.x1 = std::max(b.x1, x1);
        ++b.count;
        b.seconds += i->end - i->start;
        b.mixed = b.mixed || i->experiment != b.first->experiment;
        b.families = b.families || i->family != b.first->family;
        continue;
      }
      bars.push_back({x0, x1, i, 1, i->end - i->start, false, false});
    }
    for (const auto& b : bars) {
      const bool verify = b.first->kind == "verify";
      const std::string colour = b.families ? "#98a2b3" : colours.of(b.first->family);
      out += "<rect class=\"bar " + std::string(verify ? "verify" : "author") + "\" x=\"" +
             num(b.x0) + "\" y=\"" + num(y + (verify ? 3 : 5)) + "\" width=\"" + num(b.x1 - b.x0) +
             "\" height=\"" + num(verify ? kLane - 6 : kLane - 10) + "\" fill=\"" + colour + "\"" +
             (verify ? " stroke=\"#1b1f24\" stroke-width=\"1.5\" fill-opacity=\"0.55\"" : "") +
             "><title>";
      append_escaped(out, b.first->experiment);
      if (b.mixed) out += " and others";
      out += verify ? " verification" : " author run_on_chip";
      if (b.count > 1) out += " \xC3\x97" + std::to_string(b.count);
      out += ", " + fmt_duration(b.seconds) + (b.first->open ? " (not ended)" : "") +
             "</title></rect>";
    }
    out += "</g>";
  }
  const double axis = kLane * double(chips.size()) + 14;
  for (int k = 0; k <= 4; ++k) {
    double x = kLabel + plot * k / 4;
    out += "<text x=\"" + num(std::min(x, kWidth - 40)) + "\" y=\"" + num(axis) +
           "\" class=\"tick\">+" + fmt_duration(span * k / 4) + "</text>";
  }
  return out + "</svg>";
}

namespace {

std::string columns_svg(const std::vector<ChartPoint>& points, const FamilyColours& colours,
                        const char* cls, const char* unit, bool with_bar) {
  double top = 0;
  for (const auto& p : points) {
    if (p.has_value && std::isfinite(p.value)) top = std::max(top, p.value);
    if (with_bar) top = std::max(top, p.bar);
  }
  if (points.empty() || top <= 0) return "<p class=\"muted\">nothing to draw</p>";
  top *= 1.1;
  const double h = 160, left = 44, plot = kWidth - left - 8;
  const double w = plot / double(points.size());
  std::string out = "<svg class=\"" + std::string(cls) + "\" viewBox=\"0 0 " + num(kWidth) + " " +
                    num(h + 32) + "\" role=\"img\" aria-label=\"" + cls +
                    "\"><g transform=\"translate(0 12)\">";
  for (int k = 0; k <= 4; ++k) {
    double v = top * k / 4, y = h - h * k / 4;
    out += "<line x1=\"" + num(left) + "\" x2=\"" + num(kWidth - 8) + "\" y1=\"" + num(y) +
           "\" y2=\"" + num(y) + "\" stroke=\"#e4e7ec\"/><text x=\"2\" y=\"" + num(y + 4) + "\">" +
           fmt_fixed(v, v < 10 ? 2 : 0) + unit + "</text>";
  }
  for (size_t i = 0; i < points.size(); ++i) {
    const ChartPoint& p = points[i];
    const double x = left + w * double(i);
    const double bw = std::clamp(w * 0.8, 0.5, 40.0);
    if (p.has_value && std::isfinite(p.value)) {
      double bh = h * std::max(p.value, 0.0) / top;
      out += "<rect x=\"" + num(x) + "\" y=\"" + num(h - bh) + "\" width=\"" + num(bw) +
             "\" height=\"" + num(bh) + "\" fill=\"" + colours.of(p.family) + "\"><title>";
      append_escaped(out, p.label);
      out += ": " + fmt_fixed(p.value, 3) + unit;
      if (with_bar && p.bar > 0) out += " (bar " + fmt_fixed(p.bar, 3) + unit + ")";
      out += "</title></rect>";
    }
    if (with_bar && p.bar > 0) {
      double y = h - h * p.bar / top;
      out += "<line x1=\"" + num(x - 1) + "\" x2=\"" + num(x + bw + 1) + "\" y1=\"" + num(y) +
             "\" y2=\"" + num(y) + "\" stroke=\"#1b1f24\" stroke-width=\"2\"/>";
    }
  }
  return out + "</g></svg>";
}

}  // namespace

std::string speedup_svg(const std::vector<ChartPoint>& points, const FamilyColours& colours) {
  return columns_svg(points, colours, "speedup-chart", "x", true);
}

std::string cost_svg(const std::vector<ChartPoint>& points, const FamilyColours& colours) {
  std::string out = columns_svg(points, colours, "cost-chart", "", false);
  return out;
}

}  // namespace kd::report
