#include "examples/demo.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "audit/auditor.h"
#include "audit/report.h"
#include "audit/wiki_context.h"
#include "common/display_width.h"
#include "common/errors.h"
#include "common/files.h"
#include "common/policy_path.h"
#include "contract/transcript_records.h"
#include "dispatcher/campaign.h"
#include "examples/example_wiki.h"
#include "report/write.h"

namespace kd::examples {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;
namespace records = contract::transcript;

// Marks a root as made by the demo, so a later demo may replace it and nothing else.
constexpr const char* kMarker = ".kdispatch-demo";

void prepare_root(const fs::path& root) {
  std::error_code ec;
  if (!demo_root_usable(root))
    throw Error(quote(root.string()) +
                " is not empty and not a previous demo; refusing to reuse it");
  fs::remove_all(root, ec);
  if (ec) throw Error("remove_all(" + quote(root.string()) + "): " + ec.message());
  fs::create_directories(root, ec);
  if (ec) throw Error("mkdir(" + quote(root.string()) + "): " + ec.message());
  // As root the boxes run as an unprivileged user, who must reach the wiki through this root.
  fs::permissions(root, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                            fs::perms::others_read | fs::perms::others_exec);
  write_file_atomic(root / kMarker, "made by kdispatch demo\n");
}

// What the box or the loop refused the author, one line per tool call: file and git tools that
// failed, and commands that failed on a permission (a command's own failure is not a refusal).
std::vector<std::string> blocked_calls(const fs::path& transcript) {
  static const char* kDenied[] = {"Permission denied", "Read-only file system",
                                  "Operation not permitted"};
  std::map<std::string, std::string> asked;
  std::vector<std::string> out;
  std::istringstream in(read_file(transcript));
  for (std::string line; std::getline(in, line);) {
    json r = json::parse(line, nullptr, false);
    if (!r.is_object()) continue;
    const json& d = r.value("data", json::object());
    std::string type = r.value("type", ""), name = d.value("name", "");
    if (type == records::kToolCall) {
      const json& input = d.value("input", json::object());
      std::string what = input.contains("path")      ? input["path"].get<std::string>()
                         : input.contains("command") ? input["command"].dump()
                                                     : "";
      asked[d.value("id", "")] = name + " " + what;
      continue;
    }
    if (type != records::kToolResult || !d.value("is_error", false) || name == "finish") continue;
    std::string content = d.value("content", "");
    std::string why = content.substr(0, content.find('\n'));
    if (name == "run" || name == "run_on_chip") {
      size_t at = std::string::npos;
      for (const char* m : kDenied)
        at = std::min(at, content.find(m));
      if (at == std::string::npos) continue;
      size_t bol = content.rfind('\n', at);
      bol = bol == std::string::npos ? 0 : bol + 1;
      why = content.substr(bol, content.find('\n', at) - bol);
    }
    out.push_back(asked[d.value("id", "")] + ": " + why);
  }
  return out;
}

DemoRow one_author(const fs::path& root, const std::string& author, const fs::path& chips) {
  DemoRow row;
  row.author = author;
  row.experiment = std::string(kExampleFamily) + "/" + kExampleExperiment;
  fs::path dir = root / author;
  row.wiki = dir / "wiki";
  materialize_example(row.wiki);

  dispatcher::CampaignOptions o;
  o.wiki = row.wiki;
  o.families = {kExampleFamily};
  o.chips = chips;
  o.run_root = dir / "runs";
  o.model.provider = "fake";
  o.model.script = (examples_dir() / "scripts" / (author + "-author.json")).string();
  o.tool_dirs = {examples_dir() / "tools"};
  o.status_interval_s = 3600;
  o.write_report = false;  // the demo writes one report of both runs (write_demo_report)
  std::atomic<bool> stop{false};
  dispatcher::CampaignReport report = dispatcher::run_campaign(o, stop);
  if (report.experiments.size() != 1)
    throw Error("the example wiki queued " + std::to_string(report.experiments.size()) +
                " experiments, expected 1");
  const dispatcher::ExperimentResult& e = report.experiments[0];
  row.verdict = contract::to_string(e.outcome);
  row.run_dir = e.run_dir;
  if (!e.outcome.is_verdict()) {
    std::string why;
    for (const auto& r : e.reasons)
      why += "\n  " + r;
    throw Error("the " + author + " author's experiment ended in " + row.verdict + ":" + why);
  }

  json outcome = json::parse(read_file(e.run_dir / "outcome.json"));
  const json& speedup = outcome["receipt"]["speedup"];
  if (speedup.is_number()) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3fx", speedup.get<double>());
    row.speedup = buf;
  } else {
    row.speedup = "-";
  }
  std::string receipt = outcome["receipt"].value("path", "");
  row.receipt = receipt.empty() ? "-" : receipt;
  row.transcript_head = outcome["transcript_heads"].value("author", "");
  row.blocked = blocked_calls(e.run_dir / "author/transcript.jsonl");

  audit::AuditContext ctx = audit::context_from_wiki(row.wiki, kExampleFamily, kExampleExperiment);
  audit::AuditReport a =
      audit::run_audit({e.run_dir}, ctx, audit::load_audit_policy(policy_file("audit.json")));
  // Beside the run, where the report reads it.
  write_file_atomic(e.run_dir / "audit.json", audit::render_json(a));
  for (const auto& f : a.findings)
    row.audit_violations +=
        f.severity == audit::Severity::Violation || f.severity == audit::Severity::Fabrication;
  row.audit = a.findings.empty() ? "clean"
                                 : std::to_string(a.findings.size()) + " findings (" +
                                       std::to_string(row.audit_violations) + " violations)";
  return row;
}

}  // namespace

bool demo_root_usable(const fs::path& root) {
  std::error_code ec;
  return !fs::exists(root, ec) || fs::is_empty(root, ec) || fs::exists(root / kMarker, ec);
}

std::vector<DemoRow> run_demo(const fs::path& root_in) {
  fs::path root = fs::absolute(root_in);
  prepare_root(root);
  // Two CPU chips, simulated by their lock files (the people's `flock` convention).
  fs::path chips = root / "chips.json";
  write_file_atomic(chips,
                    json{{"chips",
                          {{{"id", "0"}, {"kind", "cpu"}, {"lock", root / "cpu-chip-0.lock"}},
                           {{"id", "1"}, {"kind", "cpu"}, {"lock", root / "cpu-chip-1.lock"}}}}}
                            .dump(2) +
                        "\n");
  return {one_author(root, "honest", chips), one_author(root, "cheating", chips)};
}

fs::path write_demo_report(const fs::path& root) {
  return report::generate_report(root, root / "report").index;
}

std::string render_demo(const std::vector<DemoRow>& rows, const fs::path& root,
                        const fs::path& report) {
  const std::vector<std::size_t> widths = {14, 9, 13, 8, 14, 30};
  auto line = [&](const std::vector<std::string>& cells) {
    std::string l;
    for (std::size_t i = 0; i < cells.size(); ++i)
      l += (i ? " " : "") + (i + 1 < cells.size() ? pad_to_width(cells[i], widths[i]) : cells[i]);
    return l + "\n";
  };
  std::string out = line({"experiment", "author", "verdict", "speedup", "transcript", "audit"});
  for (const auto& r : rows)
    out += line({r.experiment, r.author, r.verdict, r.speedup,
                 r.transcript_head.substr(0, 12) + "\xE2\x80\xA6", r.audit});
  out += "\nreceipts (by the verifier, where no author can write):\n";
  for (const auto& r : rows)
    out += "  " + r.author + ": " + (r.wiki / r.receipt).string() + "\n";
  for (const auto& r : rows) {
    if (r.blocked.empty()) continue;
    out += "\nrefused to the " + r.author + " author:\n";
    for (const auto& b : r.blocked)
      out += "  - " + b + "\n";
  }
  out += "\nwhere to look:\n";
  for (const auto& r : rows) {
    out += "  " + r.author + ": " + r.run_dir.string() +
           "/{brief.md, author/transcript.jsonl, verifier/verify.log, outcome.json, filing.md}\n";
  }
  out += "  audit again: kdispatch audit " + rows.back().run_dir.string() + " --wiki " +
         rows.back().wiki.string() + " --family " + kExampleFamily + " --experiment " +
         kExampleExperiment + "\n";
  out += "  all of it:   " + root.string() + "\n";
  out += "\nreport: " + report.string() + "\n";
  return out;
}

}  // namespace kd::examples
