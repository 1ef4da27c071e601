#include "briefs/markdown.h"

#include "common/text.h"

namespace kd::briefs {
namespace {

// Iterates lines with their offsets.
struct LineCursor {
  std::string_view text;
  size_t pos = 0;
  bool next(std::string_view& line, size_t& at) {
    if (pos >= text.size()) return false;
    at = pos;
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) {
      line = text.substr(pos);
      pos = text.size();
    } else {
      line = text.substr(pos, nl - pos);
      pos = nl + 1;
    }
    return true;
  }
};

// Tracks fenced code blocks (``` or ~~~, closed by a fence of the same char at least as long).
struct FenceState {
  char ch = 0;
  size_t len = 0;
  // Returns true when `line` is inside a fence or is a fence line.
  bool consume(std::string_view line) {
    size_t indent = 0;
    while (indent < line.size() && indent < 4 && line[indent] == ' ')
      ++indent;
    std::string_view l = line.substr(indent);
    char c = (!l.empty() && (l[0] == '`' || l[0] == '~')) ? l[0] : 0;
    size_t run = 0;
    while (c && run < l.size() && l[run] == c)
      ++run;
    if (ch) {
      if (indent < 4 && c == ch && run >= len && trim_blanks(l.substr(run)).empty()) ch = 0;
      return true;
    }
    if (indent < 4 && c && run >= 3) {
      ch = c;
      len = run;
      return true;
    }
    return false;
  }
};

}  // namespace

std::vector<Section> scan_sections(std::string_view body, int first_line) {
  std::vector<Section> out;
  LineCursor cur{body};
  FenceState fence;
  std::string_view line;
  size_t at = 0;
  int line_no = first_line - 1;
  while (cur.next(line, at)) {
    ++line_no;
    if (fence.consume(line)) continue;
    size_t indent = 0;
    while (indent < line.size() && indent < 4 && line[indent] == ' ')
      ++indent;
    if (indent > 3) continue;
    std::string_view l = line.substr(indent);
    int level = 0;
    while (level < int(l.size()) && l[level] == '#')
      ++level;
    if (level == 0 || level > 6) continue;
    if (level < int(l.size()) && l[level] != ' ' && l[level] != '\t') continue;
    std::string_view title = trim_blanks(l.substr(level));
    // A closing sequence of '#' is not part of the title when separated by a space.
    size_t h = title.size();
    while (h > 0 && title[h - 1] == '#')
      --h;
    if (h < title.size() && (h == 0 || title[h - 1] == ' '))
      title = trim_blanks(title.substr(0, h));
    out.push_back(Section{level, std::string(title), line_no, at, cur.pos, body.size()});
  }
  for (size_t i = 0; i < out.size(); ++i) {
    for (size_t j = i + 1; j < out.size(); ++j) {
      if (out[j].level <= out[i].level) {
        out[i].end = out[j].begin;
        break;
      }
    }
  }
  return out;
}

bool heading_matches(std::string_view title, std::string_view name) {
  if (title == name) return true;
  return title.size() > name.size() + 2 && title.substr(0, name.size()) == name &&
         title.substr(name.size(), 2) == " (";
}

std::string_view section_text(std::string_view body, const Section& s, bool with_heading) {
  std::string_view t =
      body.substr(with_heading ? s.begin : s.content, s.end - (with_heading ? s.begin : s.content));
  // Drop trailing blank lines and horizontal rules that separate sections in the page.
  for (;;) {
    while (!t.empty() && (t.back() == '\n' || t.back() == ' ' || t.back() == '\t'))
      t.remove_suffix(1);
    size_t nl = t.rfind('\n');
    std::string_view last = trim_blanks(nl == std::string_view::npos ? t : t.substr(nl + 1));
    bool rule = last.size() >= 3 && last.find_first_not_of('-') == std::string_view::npos;
    if (!rule || (nl == std::string_view::npos && with_heading)) break;
    t = nl == std::string_view::npos ? std::string_view() : t.substr(0, nl);
  }
  if (with_heading || t.empty()) return t;
  // Leading blank lines of the content are dropped as well.
  size_t first = 0;
  while (first < t.size()) {
    size_t nl = t.find('\n', first);
    if (nl == std::string_view::npos || !trim_blanks(t.substr(first, nl - first)).empty()) break;
    first = nl + 1;
  }
  return t.substr(first);
}

std::optional<std::string> bold_paragraph(std::string_view text, std::string_view label) {
  LineCursor cur{text};
  FenceState fence;
  std::string_view line;
  size_t at = 0;
  bool para_start = true;
  while (cur.next(line, at)) {
    if (fence.consume(line)) {
      para_start = true;
      continue;
    }
    std::string_view l = trim_blanks(line);
    if (l.empty()) {
      para_start = true;
      continue;
    }
    bool starts = para_start;
    para_start = false;
    if (!starts) continue;
    std::string open = "**" + std::string(label);
    if (l.substr(0, open.size()) != open) continue;
    std::string_view rest = l.substr(open.size());
    // Accept **Label**, **Label:**, **Label**: and **Label.**
    if (!rest.empty() && (rest[0] == ':' || rest[0] == '.')) rest.remove_prefix(1);
    if (rest.substr(0, 2) != "**") continue;
    rest.remove_prefix(2);
    if (!rest.empty() && (rest[0] == ':' || rest[0] == '.')) rest.remove_prefix(1);
    std::string out(trim_blanks(rest));
    // The paragraph continues until a blank line.
    std::string_view more;
    while (cur.next(more, at)) {
      std::string_view m = trim_blanks(more);
      if (m.empty()) break;
      if (!out.empty()) out += '\n';
      out += m;
    }
    return out;
  }
  return std::nullopt;
}

std::vector<PlanItem> parse_plan(std::string_view text, int first_line) {
  std::vector<PlanItem> items;
  LineCursor cur{text};
  FenceState fence;
  std::string_view line;
  size_t at = 0;
  int line_no = first_line - 1;
  while (cur.next(line, at)) {
    ++line_no;
    if (fence.consume(line)) continue;
    std::string_view l = trim_blanks(line);
    if (l.size() < 6 || (l[0] != '-' && l[0] != '*') || l[1] != ' ' || l[2] != '[' || l[4] != ']')
      continue;
    char mark = l[3];
    if (mark != ' ' && mark != 'x' && mark != 'X') continue;
    std::string_view rest = trim_blanks(l.substr(5));
    PlanItem item;
    item.checked = mark != ' ';
    item.line = line_no;
    size_t colon = rest.find(':');
    std::string_view id =
        colon == std::string_view::npos ? std::string_view() : rest.substr(0, colon);
    bool id_ok = id.size() > 4 && id.substr(0, 4) == "cand" &&
                 id.substr(4).find_first_not_of("0123456789") == std::string_view::npos;
    if (!id_ok) {
      // Not a plan item in the registered format: keep it so validation can name it.
      item.text = std::string(rest);
      items.push_back(std::move(item));
      continue;
    }
    item.id = std::string(id);
    std::string_view body = trim_blanks(rest.substr(colon + 1));
    // "<what> — predict <signal>"; the em dash separates the two halves.
    static constexpr std::string_view kDash = "\xE2\x80\x94";
    size_t dash = body.rfind(kDash);
    while (dash != std::string_view::npos) {
      std::string_view after = trim_blanks(body.substr(dash + kDash.size()));
      if (after.find("predict") != std::string_view::npos) {
        if (after.substr(0, 8) == "predict ") after = trim_blanks(after.substr(8));
        item.prediction = std::string(after);
        body = trim_blanks(body.substr(0, dash));
        break;
      }
      dash = dash == 0 ? std::string_view::npos : body.rfind(kDash, dash - 1);
    }
    item.text = std::string(body);
    items.push_back(std::move(item));
  }
  return items;
}

}  // namespace kd::briefs
