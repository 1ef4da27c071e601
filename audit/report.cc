#include "audit/report.h"

#include <nlohmann/json.hpp>

namespace kd::audit {

namespace {

std::string summary_line(const AuditReport& r) {
  size_t by[4] = {0, 0, 0, 0};
  for (const auto& f : r.findings)
    ++by[static_cast<int>(f.severity)];
  uint64_t suppressed = 0;
  for (const auto& [rule, n] : r.suppressed)
    suppressed += n;
  uint64_t events = 0, lines = 0, unknown = 0;
  for (const auto& [kind, n] : r.events)
    events += n;
  for (const auto& f : r.files) {
    lines += f.lines;
    for (const auto& [type, n] : f.unknown)
      unknown += n;
  }
  std::string s = "AUDIT " + std::to_string(r.files.size()) + " file(s), " + std::to_string(lines) +
                  " lines, " + std::to_string(events) + " events, " + std::to_string(unknown) +
                  " unknown records: ";
  if (r.findings.empty())
    s += "ALL CLEAR";
  else
    s += std::to_string(r.findings.size() + suppressed) + " finding(s) (" + std::to_string(by[0]) +
         " FABRICATION, " + std::to_string(by[1]) + " VIOLATION, " + std::to_string(by[2]) +
         " DRIFT, " + std::to_string(by[3]) + " HYGIENE" +
         (suppressed ? ", " + std::to_string(suppressed) + " more not listed" : "") + ")";
  if (!r.not_checked.empty()) {
    s += "; not checked:";
    bool first = true;
    for (const auto& [rule, why] : r.not_checked) {
      s += (first ? " " : ", ") + rule + " (" + why + ")";
      first = false;
    }
  }
  return s;
}

}  // namespace

std::string render_text(const AuditReport& r) {
  std::string out;
  for (const auto& f : r.findings) {
    const AuditRule& rule = audit_rule(f.rule);
    out += "FINDING [" + std::string(severity_name(f.severity)) + "] " + std::string(rule.id) +
           ": " + f.defect + " (" + f.evidence + ")\n";
    out += "CORRECT: " + std::string(rule.correct) + "\n";
    out += "RE-READ: " + std::string(rule.reread) + "\n";
  }
  for (const auto& d : r.supervision)
    out += "SUPERVISOR " + d.text + " (" + d.evidence + ")\n";
  return out + summary_line(r) + "\n";
}

std::string render_json(const AuditReport& r) {
  nlohmann::json doc;
  doc["findings"] = nlohmann::json::array();
  for (const auto& f : r.findings) {
    const AuditRule& rule = audit_rule(f.rule);
    doc["findings"].push_back({{"rule", std::string(rule.id)},
                               {"severity", severity_name(f.severity)},
                               {"defect", f.defect},
                               {"evidence", f.evidence},
                               {"correct", std::string(rule.correct)},
                               {"reread", std::string(rule.reread)}});
  }
  doc["files"] = nlohmann::json::array();
  for (const auto& f : r.files) {
    nlohmann::json file = {{"path", f.path},       {"format", format_name(f.format)},
                           {"lines", f.lines},     {"bytes", f.bytes},
                           {"events", f.events},   {"malformed", f.malformed},
                           {"unknown", f.unknown}, {"torn_last_line", f.torn_last_line}};
    if (f.chain)
      file["chain"] = {{"ok", f.chain->ok},
                       {"head", f.chain->head},
                       {"broken_line", f.chain->broken_line},
                       {"reason", f.chain->reason}};
    doc["files"].push_back(std::move(file));
  }
  doc["supervision"] = nlohmann::json::array();
  for (const auto& d : r.supervision)
    doc["supervision"].push_back(
        {{"decision", d.decision}, {"text", d.text}, {"evidence", d.evidence}});
  doc["events"] = r.events;
  doc["not_checked"] = r.not_checked;
  doc["suppressed"] = r.suppressed;
  doc["summary"] = summary_line(r);
  return doc.dump(2) + "\n";
}

}  // namespace kd::audit
