#include "contract/ledger.h"

#include <algorithm>
#include <regex>

#include "common/text.h"

namespace kd::contract {
namespace {

std::string_view first_line(std::string_view s) {
  return s.substr(0, s.find('\n'));
}

// Splits a markdown table row "| a | b |" into trimmed cells; escaped pipes stay in the cell.
std::vector<std::string> cells(std::string_view row) {
  std::string r(trim(row));
  if (!r.empty() && r.front() == '|') r.erase(0, 1);
  if (!r.empty() && r.back() == '|' && (r.size() < 2 || r[r.size() - 2] != '\\')) r.pop_back();
  std::vector<std::string> out;
  std::string cur;
  for (size_t i = 0; i < r.size(); ++i) {
    if (r[i] == '\\' && i + 1 < r.size() && r[i + 1] == '|') {
      cur += '|';
      ++i;
    } else if (r[i] == '|') {
      out.emplace_back(trim(cur));
      cur.clear();
    } else {
      cur += r[i];
    }
  }
  out.emplace_back(trim(cur));
  return out;
}

bool is_separator(const std::vector<std::string>& c) {
  return std::all_of(c.begin(), c.end(), [](const std::string& s) {
    return !s.empty() && s.find_first_not_of(":-") == std::string::npos;
  });
}

const std::regex& subject_regex() {
  static const std::regex re(R"(^cand([0-9]+)\(([a-z0-9-]+) (v[0-9]{3})\): .+ — .+)");
  return re;
}

}  // namespace

const std::vector<std::string> kLedgerColumns = {"candidate",
                                                 "class",
                                                 "committed SHA",
                                                 "parity (max abs / max rel)",
                                                 "p50 ms (author-side)",
                                                 "vs naive",
                                                 "receipt",
                                                 "why kept/rejected"};

bool parse_commit_subject(std::string_view message, CommitSubject* out) {
  std::string subject(first_line(message));
  std::smatch m;
  if (!std::regex_search(subject, m, subject_regex())) return false;
  if (out) *out = {"cand" + m[1].str(), m[2].str(), m[3].str()};
  return true;
}

bool commit_subject_ok(std::string_view message) {
  return parse_commit_subject(message, nullptr);
}

bool has_exp_footer(std::string_view message) {
  size_t nl = message.find('\n');
  if (nl == std::string_view::npos) return false;
  std::string_view body = message.substr(nl + 1);
  size_t pos = 0;
  while (pos <= body.size()) {
    size_t end = body.find('\n', pos);
    std::string_view line =
        body.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
    if (starts_with(line, "exp:") && !trim(line.substr(4)).empty()) return true;
    if (end == std::string_view::npos) break;
    pos = end + 1;
  }
  return false;
}

Ledger parse_ledger(std::string_view text) {
  Ledger ledger;
  std::vector<std::string> lines;
  for (size_t pos = 0; pos <= text.size();) {
    size_t end = text.find('\n', pos);
    std::string line(
        text.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos));
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
    if (end == std::string_view::npos) break;
    pos = end + 1;
  }
  size_t i = 0;
  while (i < lines.size() && trim(lines[i]).empty())
    ++i;
  static const std::regex loaded_re(R"(^loaded:\s*\[(.*)\]\s*$)");
  std::smatch m;
  std::string first(i < lines.size() ? trim(lines[i]) : "");
  if (std::regex_match(first, m, loaded_re)) {
    ledger.has_loaded_line = true;
    std::string items = m[1].str();
    size_t start = 0;
    while (start <= items.size()) {
      size_t comma = items.find(',', start);
      std::string item(trim(std::string_view(items).substr(
          start, comma == std::string::npos ? comma : comma - start)));
      if (!item.empty()) ledger.loaded.push_back(item);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    if (ledger.loaded.empty())
      ledger.problems.push_back("line " + std::to_string(i + 1) + ": loaded: lists nothing");
    ++i;
  } else {
    ledger.problems.push_back("the first line is not the `loaded: [...]` attestation");
  }

  // The table: header row, separator row, data rows.
  while (i < lines.size() && trim(lines[i]).empty())
    ++i;
  if (i >= lines.size() || !starts_with(trim(lines[i]), "|")) {
    ledger.problems.push_back("no ledger table after the loaded: line");
    return ledger;
  }
  std::vector<std::string> header = cells(lines[i]);
  std::vector<std::string> want_lower, got_lower;
  for (const auto& c : kLedgerColumns)
    want_lower.push_back(lower(c));
  for (const auto& c : header)
    got_lower.push_back(lower(c));
  if (got_lower != want_lower) {
    std::string want;
    for (const auto& c : kLedgerColumns)
      want += (want.empty() ? "" : " | ") + c;
    ledger.problems.push_back("line " + std::to_string(i + 1) +
                              ": table columns must be exactly | " + want + " |");
  }
  ++i;
  if (i < lines.size() && is_separator(cells(lines[i]))) ++i;
  static const std::regex cand_re(R"(^cand[0-9]+$)");
  for (; i < lines.size(); ++i) {
    std::string t(trim(lines[i]));
    if (t.empty()) break;
    if (t.front() != '|') break;
    std::vector<std::string> c = cells(t);
    std::string where = "line " + std::to_string(i + 1);
    if (c.size() != kLedgerColumns.size()) {
      ledger.problems.push_back(where + ": " + std::to_string(c.size()) + " cells where " +
                                std::to_string(kLedgerColumns.size()) + " columns are fixed");
      continue;
    }
    LedgerRow row{c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], static_cast<int>(i + 1)};
    if (!std::regex_match(row.candidate, cand_re)) {
      ledger.problems.push_back(where + ": candidate \"" + row.candidate + "\" is not candN");
    }
    ledger.rows.push_back(std::move(row));
  }
  if (ledger.rows.empty()) ledger.problems.push_back("the ledger table has no rows");
  return ledger;
}

}  // namespace kd::contract
