#include "report/model.h"

#include <algorithm>
#include <set>

#include "common/errors.h"
#include "common/files.h"
#include "common/time.h"
#include "contract/journal_records.h"
#include "report/transcript_view.h"

namespace kd::report {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;
namespace jr = contract::journal;

// The journal's complete lines. The dispatcher's reader lives above this room; this one reads
// the same format (docs/dispatcher.md) but never throws: a bad line is a problem, the rest is
// still read, and a torn last line (a live run appending) is left out.
struct JournalLine {
  std::string ts, type, experiment;
  json data;
};

std::vector<JournalLine> read_journal(const fs::path& path, std::vector<std::string>& problems) {
  std::vector<JournalLine> out;
  std::string text;
  try {
    text = read_file(path);
  } catch (const std::exception& e) {
    problems.push_back(e.what());
    return out;
  }
  size_t line_no = 0;
  for (size_t pos = 0; pos < text.size();) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) break;
    ++line_no;
    json j = json::parse(text.begin() + static_cast<long>(pos),
                         text.begin() + static_cast<long>(nl), nullptr, false);
    pos = nl + 1;
    if (!j.is_object() || !j.contains("type") || !j["type"].is_string()) {
      problems.push_back("journal " + quote(path.string()) + " line " + std::to_string(line_no) +
                         " is not a journal record");
      continue;
    }
    JournalLine l;
    l.ts = j.value("ts", "");
    l.type = j.value("type", "");
    l.experiment = j.value("experiment", "");
    if (j.contains("data") && j["data"].is_object()) l.data = std::move(j["data"]);
    out.push_back(std::move(l));
  }
  return out;
}

// A JSON file, or null with a problem naming it (absent files are the caller's to judge).
json read_json(const fs::path& path, std::vector<std::string>& problems) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return nullptr;
  try {
    json j = json::parse(read_file(path), nullptr, false);
    if (j.is_discarded()) {
      problems.push_back(path.filename().string() + " is not JSON");
      return nullptr;
    }
    return j;
  } catch (const std::exception& e) {
    problems.push_back(e.what());
    return nullptr;
  }
}

double seconds(const std::string& ts) {
  return parse_rfc3339(ts).value_or(0);
}

std::string first_line(const std::string& s) {
  return s.substr(0, s.find('\n'));
}

// The hypothesis and the bar, from the brief as sent (brief.json's "falsification bar" item).
void read_brief(ExperimentRow& row) {
  json b = read_json(row.run_dir / "brief.json", row.problems);
  if (!b.is_object() || !b.contains("items") || !b["items"].is_array()) return;
  for (const auto& item : b["items"]) {
    if (!item.is_object() || item.value("item", "") != "falsification bar") continue;
    if (item.contains("hypothesis") && item["hypothesis"].is_string())
      row.hypothesis = first_line(item["hypothesis"].get<std::string>());
    if (item.contains("bar") && item["bar"].is_number()) row.bar = item["bar"].get<double>();
  }
}

void read_outcome(ExperimentRow& row) {
  json o = read_json(row.run_dir / "outcome.json", row.problems);
  if (!o.is_object()) return;
  if (o.contains("receipt") && o["receipt"].is_object()) {
    const json& r = o["receipt"];
    if (r.contains("speedup") && r["speedup"].is_number()) row.speedup = r["speedup"].get<double>();
    if (r.contains("verdict") && r["verdict"].is_string()) row.receipt_verdict = r["verdict"];
  }
  if (o.contains("verifier") && o["verifier"].is_object() && o["verifier"].contains("chip") &&
      o["verifier"]["chip"].is_string())
    row.verifier_chip = o["verifier"]["chip"];
  if (!row.bar && o.contains("bar") && o["bar"].is_number()) row.bar = o["bar"].get<double>();
}

// audit.json: `kdispatch audit --json`'s document, saved beside the run by whoever audited it.
void read_audit(ExperimentRow& row) {
  std::vector<std::string> problems;
  json a = read_json(row.run_dir / "audit.json", problems);
  if (!problems.empty()) row.audit.problem = problems.front();
  if (!a.is_object()) return;
  row.audit.present = true;
  if (!a.contains("findings") || !a["findings"].is_array()) return;
  for (const auto& f : a["findings"]) {
    ++row.audit.findings;
    std::string sev = f.is_object() ? f.value("severity", "") : "";
    row.audit.violations += sev == "VIOLATION" || sev == "FABRICATION";
  }
}

}  // namespace

void apply_transcript(ExperimentRow& row, const TranscriptView& v) {
  row.chip_calls.clear();
  if (v.missing) return;
  if (!v.problem.empty()) {
    row.problems.push_back(v.problem);
    return;
  }
  row.denials = v.violations;
  row.turns = std::max(row.turns, v.turns);
  row.cache_read_tokens = v.cache_read_tokens;
  row.cache_write_tokens = v.cache_write_tokens;
  if (row.input_tokens == 0 && row.output_tokens == 0) {
    row.input_tokens = v.input_tokens;
    row.output_tokens = v.output_tokens;
  }
  if (row.cost_usd == 0) row.cost_usd = v.cost_usd;
  const std::string chip = !v.chip.empty() ? v.chip : row.author_chip;
  for (const auto& call : v.chip_calls) {
    ChipInterval i{chip,
                   row.key,
                   row.family,
                   "author",
                   seconds(call.start),
                   seconds(call.end),
                   call.end.empty()};
    if (i.open) i.end = i.start;
    if (i.start > 0) row.chip_calls.push_back(i);
  }
}

namespace {

// What a record that is not a verdict says went wrong (the dispatcher's error records).
std::vector<std::string> reasons_of(const json& d) {
  std::vector<std::string> out;
  for (const char* k : {"reasons", "reason", "error", "message", "cause"}) {
    auto it = d.find(k);
    if (it == d.end()) continue;
    if (it->is_string()) out.push_back(*it);
    if (it->is_array())
      for (const auto& r : *it)
        if (r.is_string()) out.push_back(r);
  }
  return out;
}

std::string safe_file_part(const std::string& s) {
  std::string out;
  for (char ch : s) {
    bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '-' || ch == '.' || ch == '_';
    out += ok ? ch : '_';
  }
  return out;
}

}  // namespace

void finish_campaign(Campaign& c) {
  c.outcomes.clear();
  c.cost_usd = 0;
  c.input_tokens = c.output_tokens = c.cache_read_tokens = c.cache_write_tokens = 0;
  c.intervals.erase(std::remove_if(c.intervals.begin(), c.intervals.end(),
                                   [](const ChipInterval& i) { return i.kind == "author"; }),
                    c.intervals.end());
  for (auto& row : c.experiments) {
    if (row.outcome.empty()) row.outcome = c.running ? "running" : "unfinished";
    ++c.outcomes[row.outcome];
    c.cost_usd += row.cost_usd;
    c.input_tokens += row.input_tokens;
    c.output_tokens += row.output_tokens;
    c.cache_read_tokens += row.cache_read_tokens;
    c.cache_write_tokens += row.cache_write_tokens;
    if (!row.first_ts.empty() && (c.first_ts.empty() || row.first_ts < c.first_ts))
      c.first_ts = row.first_ts;
    if (row.last_ts > c.last_ts) c.last_ts = row.last_ts;
    c.intervals.insert(c.intervals.end(), row.chip_calls.begin(), row.chip_calls.end());
  }
  if (!c.run.started.empty() && (c.first_ts.empty() || c.run.started < c.first_ts))
    c.first_ts = c.run.started;
  if (c.run.ended > c.last_ts) c.last_ts = c.run.ended;
  double a = seconds(c.first_ts), b = seconds(c.last_ts);
  c.wall_s = a > 0 && b >= a ? b - a : 0;
  const double now = seconds(utc_now_rfc3339());
  for (auto& i : c.intervals) {
    if (i.open) i.end = c.running ? std::max(now, i.start) : std::max(seconds(c.last_ts), i.start);
  }
  std::sort(c.intervals.begin(), c.intervals.end(),
            [](const ChipInterval& x, const ChipInterval& y) {
              return x.chip != y.chip ? x.chip < y.chip : x.start < y.start;
            });
}

namespace {

// The campaign's record of itself (contract/journal_records.h), in the campaign's folder or, for
// a campaign that is one of several families' run folders, beside it.
RunInfo read_run_info(const fs::path& dir, std::vector<std::string>& problems) {
  RunInfo r;
  const char* name = contract::journal::kCampaignProcessFile;
  for (const fs::path& p : {dir / name, dir.parent_path() / name}) {
    json j = read_json(p, problems);
    if (!j.is_object()) continue;
    r.present = true;
    if (j.contains("command_line") && j["command_line"].is_array()) {
      for (const auto& a : j["command_line"]) {
        if (!a.is_string()) continue;
        const std::string s = a.get<std::string>();
        if (!r.command_line.empty()) r.command_line += ' ';
        r.command_line += s.find_first_of(" \t'\"") == std::string::npos ? s : quote(s);
      }
    }
    if (j.contains("model") && j["model"].is_object()) {
      r.provider = j["model"].value("provider", "");
      r.model = j["model"].value("name", "");
    }
    r.mode = j.value("mode", "");
    if (j.contains("budgets") && j["budgets"].is_object()) {
      for (const auto& [k, v] : j["budgets"].items())
        if (v.is_number() && v.get<double>() > 0) r.budgets[k] = v;  // 0 is no limit
    }
    r.started = j.value("started", "");
    if (j.contains("ended") && j["ended"].is_string()) r.ended = j["ended"];
    break;
  }
  return r;
}

void find_campaigns(const fs::path& dir, const fs::path& root, int depth,
                    std::vector<fs::path>& out) {
  std::error_code ec;
  if (fs::is_regular_file(dir / "journal.jsonl", ec)) {
    out.push_back(dir);
    return;  // below a campaign are its runs, never another campaign
  }
  if (depth <= 0) return;
  std::vector<fs::path> subdirs;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name[0] == '.') continue;
    if (it->is_directory(ec) && !it->is_symlink(ec)) subdirs.push_back(it->path());
  }
  std::sort(subdirs.begin(), subdirs.end());
  for (const auto& s : subdirs)
    find_campaigns(s, root, depth - 1, out);
}

}  // namespace

std::size_t Report::experiment_count() const {
  std::size_t n = 0;
  for (const auto& c : campaigns)
    n += c.experiments.size();
  return n;
}

std::string page_name(const std::string& campaign, const std::string& key) {
  std::string base = campaign.empty() || campaign == "." ? key : campaign + "--" + key;
  return "experiments/" + safe_file_part(base) + ".html";
}

Campaign load_campaign(const fs::path& dir, const std::string& name, bool transcripts) {
  Campaign c;
  c.dir = dir;
  c.name = name;
  c.run = read_run_info(dir, c.problems);
  std::vector<JournalLine> lines = read_journal(dir / "journal.jsonl", c.problems);
  std::map<std::string, size_t> index;
  std::map<std::string, double> verify_start;  // experiment -> ts of verify_started
  bool open_work = false;
  for (const auto& l : lines) {
    auto [it, inserted] = index.try_emplace(l.experiment, c.experiments.size());
    if (inserted) {
      ExperimentRow row;
      row.key = l.experiment;
      size_t slash = l.experiment.rfind('/');
      row.family = l.experiment.substr(0, slash);
      row.version = slash == std::string::npos ? "" : l.experiment.substr(slash + 1);
      row.first_ts = l.ts;
      c.experiments.push_back(std::move(row));
    }
    ExperimentRow& row = c.experiments[it->second];
    row.last_ts = l.ts;
    const json& d = l.data;
    if (l.type == jr::kDispatched) {
      row.author_chip = d.value("chip", "");
      if (d.contains("run_dir") && d["run_dir"].is_string()) {
        fs::path rd = d["run_dir"].get<std::string>();
        row.run_dir = rd.is_absolute() ? rd : dir.parent_path() / rd;
      }
    } else if (l.type == jr::kAuthorTurn) {
      row.turns = static_cast<int>(d.value("turn", long{row.turns}));
      row.input_tokens = d.value("input_tokens", row.input_tokens);
      row.output_tokens = d.value("output_tokens", row.output_tokens);
      row.cost_usd = d.value("cost_usd", row.cost_usd);
    } else if (l.type == jr::kCommitted) {
      ++row.commits;
    } else if (l.type == jr::kVerifyStarted) {
      row.verifier_chip = d.value("chip", "");
      verify_start[row.key] = seconds(l.ts);
    } else if (l.type == jr::kReceiptValidated || l.type == jr::kVerdict) {
      auto vs = verify_start.find(row.key);
      if (vs != verify_start.end() && vs->second > 0) {  // the chip is free once measured
        c.intervals.push_back({row.verifier_chip, row.key, row.family, "verify", vs->second,
                               std::max(seconds(l.ts), vs->second), false});
        verify_start.erase(vs);
      }
      if (l.type == jr::kVerdict) {
        row.outcome = d.value("verdict", "");
        row.reasons = reasons_of(d);
      }
    } else if (l.type == "error" || l.type == "refused" || l.type == "not_dispatched") {
      row.outcome = l.type == "not_dispatched" ? "not dispatched" : l.type;
      row.reasons = reasons_of(d);
    }
  }
  for (const auto& row : c.experiments)
    open_work = open_work || row.outcome.empty();
  c.running = open_work && (!c.run.present || c.run.ended.empty());
  for (auto& [key, start] : verify_start) {  // a verification without its end: still measuring
    ExperimentRow& row = c.experiments[index[key]];
    c.intervals.push_back({row.verifier_chip, key, row.family, "verify", start, start, true});
  }
  std::set<std::string> pages;
  for (auto& row : c.experiments) {
    row.page = page_name(name, row.key);
    for (int n = 2; !pages.insert(row.page).second; ++n)
      row.page = page_name(name, row.key + "-" + std::to_string(n));
    if (row.run_dir.empty()) continue;
    read_brief(row);
    read_outcome(row);
    read_audit(row);
    if (transcripts)
      apply_transcript(row, read_transcript(row.run_dir / "author" / "transcript.jsonl"));
  }
  finish_campaign(c);
  return c;
}

Report load_report(const fs::path& root_in, bool transcripts, int max_depth) {
  std::error_code ec;
  fs::path root = fs::absolute(root_in, ec);
  if (ec || !fs::is_directory(root, ec))
    throw Error("run root " + quote(root_in.string()) + " is not a directory");
  Report r;
  r.root = root;
  r.generated = utc_now_rfc3339();
  std::vector<fs::path> dirs;
  find_campaigns(root, root, max_depth, dirs);
  for (const auto& d : dirs) {
    std::string name = d == root ? "." : d.lexically_relative(root).string();
    r.campaigns.push_back(load_campaign(d, name, transcripts));
  }
  return r;
}

}  // namespace kd::report
