// Markdown structure the wiki relies on: ATX headings of any level (never inside a fenced code
// block), sections that run to the next heading of the same or a higher level, bold-labeled
// paragraphs and the candidate-plan checkbox list.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kd::briefs {

struct Section {
  int level = 0;       // 1 for '#', 6 for '######'
  std::string title;   // heading text, trimmed, closing '#'s removed
  int line = 0;        // 1-based page line of the heading
  size_t begin = 0;    // offset of the heading line in the body
  size_t content = 0;  // offset just after the heading line
  size_t end = 0;      // offset where the next same-or-higher heading starts (or body end)
};

// Headings of `body` in order. `first_line` is the page line number of the body's first line.
std::vector<Section> scan_sections(std::string_view body, int first_line);

// True when `title` is `name`, or `name` followed by a parenthetical (" (...)"), so a policy can
// name "Generation scope" for "Generation scope (what transfers, what to re-derive)".
bool heading_matches(std::string_view title, std::string_view name);

// Text of a section's content with trailing blank lines and thematic breaks ("---") removed.
std::string_view section_text(std::string_view body, const Section& s, bool with_heading);

// The paragraph that starts with **label** (optionally followed by ':'), label removed.
std::optional<std::string> bold_paragraph(std::string_view text, std::string_view label);

struct PlanItem {
  std::string id;          // "cand1"
  std::string text;        // what the candidate does
  std::string prediction;  // the text after "predict", empty when the line carries none
  bool checked = false;
  int line = 0;
};

// Checkbox items `- [ ] cand<N>: <what> — predict <signal>` in `text` (fenced blocks skipped);
// other lines are ignored. `first_line` numbers the lines for PlanItem::line.
std::vector<PlanItem> parse_plan(std::string_view text, int first_line);

}  // namespace kd::briefs
