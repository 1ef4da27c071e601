// Writes a synthetic campaign for the report benchmark: OUT/night/journal.jsonl and N run
// directories (brief.json, outcome.json, audit.json, a sealed author transcript of TURNS turns
// in the linear form: each request carries only its new messages), 8 chips, 6 families.
//   bench_report_gen OUT N TURNS
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "common/time.h"
#include "contract/transcript_chain.h"

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr std::int64_t kStart = 1'780'000'000'000;  // ms since the epoch

std::string ts(std::int64_t ms) {
  return kd::format_rfc3339_ms(kStart + ms);
}

class Transcript {
 public:
  explicit Transcript(const fs::path& path) : out_(path) {}
  void add(const std::string& type, const json& data, std::int64_t ms) {
    kd::contract::ChainRecord r{
        seq_++,     prev_.empty() ? std::string(kd::contract::kZeroHash) : prev_,
        ts(ms),     "s",
        "author",   type,
        data.dump()};
    out_ << kd::contract::seal_chain_line(r, &prev_) << '\n';
  }

 private:
  std::ofstream out_;
  std::uint64_t seq_ = 0;
  std::string prev_;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: bench_report_gen OUT N TURNS\n");
    return 64;
  }
  const fs::path campaign =
      fs::absolute(fs::path(argv[1]) / "night");  // as the dispatcher journals it
  const int n = std::atoi(argv[2]), turns = std::atoi(argv[3]);
  fs::create_directories(campaign);
  std::ofstream journal(campaign / "journal.jsonl");
  std::uint64_t seq = 0;
  auto record = [&](std::int64_t ms, const char* type, const std::string& exp, const json& d) {
    journal
        << json{{"seq", seq++}, {"ts", ts(ms)}, {"type", type}, {"experiment", exp}, {"data", d}}
               .dump()
        << '\n';
  };
  const std::string tool_output(600, 'o');
  const std::string text =
      "I will fuse the two passes so the row block is read once; the mean square and the scale "
      "are computed in registers and the store is vectorized.";
  for (int i = 0; i < n; ++i) {
    const std::string family = "family-" + std::to_string(i % 6);
    char version[16];
    std::snprintf(version, sizeof version, "v%03d", i / 6 + 1);
    const std::string key = family + "/" + version;
    const fs::path run = campaign / (family + "-" + version);
    fs::create_directories(run / "author");
    const std::string chip = std::to_string(i % 8), vchip = std::to_string((i + 1) % 8);
    const std::int64_t t0 = std::int64_t(i / 8) * 3'600'000 / 8;
    const double bar = 1.05 + 0.01 * (i % 10), speedup = 0.8 + 0.002 * (i % 300);
    std::ofstream(run / "brief.json")
        << json{{"items",
                 {{{"item", "falsification bar"},
                   {"bar", bar},
                   {"hypothesis", "experiment " + key + ": " + text}}}}}
               .dump(2);
    std::ofstream(run / "outcome.json") << json{
        {"verdict", speedup >= bar ? "supported" : "refuted"},
        {"receipt",
         {{"path", "raw/receipt.json"}, {"ok", true}, {"verdict", "PASS"}, {"speedup", speedup}}},
        {"verifier", {{"chip", vchip}}}}.dump(2);
    std::ofstream(run / "audit.json")
        << json{{"findings", json::array()}, {"summary", "clean"}}.dump();
    Transcript t(run / "author" / "transcript.jsonl");
    t.add("header",
          {{"family", family},
           {"experiment", version},
           {"chip", chip},
           {"model", {{"provider", "anthropic"}, {"name", "model"}}}},
          t0);
    std::int64_t ms = t0;
    for (int turn = 1; turn <= turns; ++turn) {
      const std::string id = "call_" + std::to_string(turn);
      t.add("request",
            {{"turn", turn}, {"attempt", 1}, {"new_messages", json::array({{{"role", "user"}}})}},
            ms += 10);
      t.add("response",
            {{"turn", turn},
             {"text", text},
             {"tool_calls", {{{"id", id}, {"name", "run_on_chip"}}}},
             {"stop_reason", "tool_use"},
             {"usage",
              {{"input_tokens", 2000}, {"output_tokens", 150}, {"cache_read_input_tokens", 1800}}},
             {"cost_usd", 0.004}},
            ms += 900);
      t.add(
          "tool_call",
          {{"id", id}, {"name", "run_on_chip"}, {"input", {{"command", {"python3", "bench.py"}}}}},
          ms += 5);
      t.add("tool_result",
            {{"id", id},
             {"name", "run_on_chip"},
             {"is_error", false},
             {"exit_code", 0},
             {"content", tool_output}},
            ms += 1500);
    }
    t.add("end", {{"reason", "finished"}, {"turns", turns}}, ms += 10);
    record(t0, "dispatched", key, {{"chip", chip}, {"run_dir", run.string()}});
    record(ms, "author_turn", key,
           {{"turn", turns},
            {"input_tokens", 2000 * turns},
            {"output_tokens", 150 * turns},
            {"cost_usd", 0.004 * turns}});
    record(ms, "finished", key, {{"end_reason", "finished"}});
    record(ms + 1000, "verify_started", key, {{"chip", vchip}});
    record(ms + 61'000, "receipt_validated", key, {{"chip", vchip}, {"ok", true}});
    record(ms + 61'500, "verdict", key, {{"verdict", speedup >= bar ? "supported" : "refuted"}});
  }
  return 0;
}
