#include "tests/report/run_root_fixture.h"

#include <cstdio>
#include <fstream>

#include "common/files.h"

namespace kd::test {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::string at(const std::string& hms) {
  return "2026-03-02T" + hms + "Z";
}

CampaignFixture::CampaignFixture(fs::path root, std::string name) : dir_(root / name) {
  fs::create_directories(dir_);
}

void CampaignFixture::record(const std::string& ts, const std::string& type,
                             const std::string& experiment, const json& data) {
  json line = {
      {"seq", seq_++}, {"ts", ts}, {"type", type}, {"experiment", experiment}, {"data", data}};
  std::ofstream(dir_ / "journal.jsonl", std::ios::app) << line.dump() << "\n";
}

fs::path CampaignFixture::run_dir(const std::string& experiment) const {
  std::string name = experiment;
  name[name.find('/')] = '-';
  fs::path d = dir_ / name;
  fs::create_directories(d);
  return d;
}

void CampaignFixture::write_brief(const std::string& experiment, const std::string& hypothesis,
                                  double bar) {
  json brief = {{"items",
                 {{{"item", "work dir"}},
                  {{"item", "falsification bar"}, {"bar", bar}, {"hypothesis", hypothesis}}}}};
  write_file_replace(run_dir(experiment) / "brief.json", brief.dump(2));
  write_file_replace(run_dir(experiment) / "brief.md", "# Brief\n\n" + hypothesis + "\n");
}

void CampaignFixture::write_outcome(const std::string& experiment, const std::string& verdict,
                                    double speedup) {
  json o = {{"experiment", experiment},
            {"verdict", verdict},
            {"reasons", json::array()},
            {"receipt",
             {{"path", "raw/receipt.json"},
              {"ok", true},
              {"verdict", "PASS"},
              {"speedup", speedup},
              {"p50_ms", {{"baseline", 1.0}, {"candidate", 1.0 / speedup}}}}},
            {"verifier", {{"chip", "1"}, {"argv", {"kverify"}}}}};
  write_file_replace(run_dir(experiment) / "outcome.json", o.dump(2));
}

void CampaignFixture::write_audit(const std::string& experiment,
                                  const std::vector<std::string>& severities) {
  json a = {{"findings", json::array()}, {"summary", "AUDIT"}};
  for (const auto& s : severities)
    a["findings"].push_back(
        {{"rule", "rule"}, {"severity", s}, {"defect", "d"}, {"evidence", "e"}});
  write_file_replace(run_dir(experiment) / "audit.json", a.dump(2));
}

void CampaignFixture::write_transcript(const std::string& experiment, const TranscriptBuilder& t) {
  fs::create_directories(run_dir(experiment) / "author");
  write_file_replace(run_dir(experiment) / "author" / "transcript.jsonl", t.text());
}

void CampaignFixture::verified(const std::string& experiment, const std::string& author_chip,
                               const std::string& verifier_chip, const std::string& t0,
                               const std::string& t1, const std::string& t2, const std::string& t3,
                               const std::string& verdict, double cost) {
  record(at(t0), "dispatched", experiment,
         {{"chip", author_chip}, {"run_dir", run_dir(experiment).string()}});
  record(at(t0), "author_turn", experiment,
         {{"turn", 2}, {"input_tokens", 100}, {"output_tokens", 20}, {"cost_usd", cost}});
  record(at(t0), "finished", experiment, {{"end_reason", "finished"}});
  record(at(t1), "verify_started", experiment, {{"chip", verifier_chip}});
  record(at(t2), "receipt_validated", experiment, {{"chip", verifier_chip}, {"ok", true}});
  record(at(t3), "verdict", experiment, {{"verdict", verdict}, {"reasons", {"because"}}});
}

TranscriptBuilder author_transcript(int turns, const std::string& chip, const std::string& text,
                                    const std::string& output, const std::string& start_hms) {
  TranscriptBuilder t;
  int h = 0, m = 0, s = 0;
  std::sscanf(start_hms.c_str(), "%d:%d:%d", &h, &m, &s);
  auto stamp = [&](int offset_s) {
    int total = h * 3600 + m * 60 + s + offset_s;
    char buf[16];
    std::snprintf(buf, sizeof buf, "%02d:%02d:%02d", total / 3600, total / 60 % 60, total % 60);
    return at(buf);
  };
  t.add("header",
        {{"family", "fam"},
         {"experiment", "v001"},
         {"model", {{"provider", "fake"}, {"name", "scripted"}}},
         {"chip", chip},
         {"worktree", "/w"}},
        stamp(0));
  for (int turn = 1; turn <= turns; ++turn) {
    const int t0 = turn * 10;
    t.add("request", {{"turn", turn}, {"attempt", 1}, {"provider", "fake"}}, stamp(t0));
    std::string id = "call_" + std::to_string(turn);
    t.add(
        "response",
        {{"turn", turn},
         {"text", text},
         {"tool_calls", {{{"id", id}, {"name", "run_on_chip"}, {"input", {{"cmd", "x"}}}}}},
         {"stop_reason", "tool_use"},
         {"usage", {{"input_tokens", 100}, {"output_tokens", 10}, {"cache_read_input_tokens", 50}}},
         {"cost_usd", 0.01}},
        stamp(t0 + 1));
    t.add("tool_call", {{"id", id}, {"name", "run_on_chip"}, {"input", {{"command", text}}}},
          stamp(t0 + 2));
    t.add("tool_result",
          {{"id", id}, {"name", "run_on_chip"}, {"is_error", false}, {"content", output}},
          stamp(t0 + 5));
  }
  t.add("end", {{"reason", "finished"}, {"finish", nullptr}, {"turns", turns}},
        stamp(turns * 10 + 9));
  return t;
}

}  // namespace kd::test
