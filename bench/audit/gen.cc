// Writes a synthetic transcript of about N MiB to stdout, for the audit benchmarks:
//   bench_audit_gen claude N     Claude Code session JSONL with the usual mix of long lines
//   bench_audit_gen kdispatch N  a sealed kdispatch author transcript
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "contract/transcript_chain.h"

namespace {

using nlohmann::json;

std::string filler(size_t n, unsigned seed) {
  static const char* words[] = {"pallas", "tile",   "vmem", "block", "grid",
                                "reduce", "kernel", "load", "store", "mask"};
  std::string s;
  while (s.size() < n) {
    s += words[seed++ % 10];
    s += (seed % 7 == 0) ? "\n" : " ";
  }
  s.resize(n);
  return s;
}

json envelope(const std::string& type, unsigned i) {
  return {{"type", type},
          {"uuid", "u-" + std::to_string(i)},
          {"parentUuid", "u-" + std::to_string(i - 1)},
          {"isSidechain", false},
          {"sessionId", "7d2f4e10-0000-4000-8000-000000000001"},
          {"version", "2.1.90"},
          {"cwd", "/home/ana/kern"},
          {"gitBranch", "kernel/rms-v001"},
          {"timestamp", "2026-03-02T10:00:00.000Z"}};
}

json assistant(unsigned i, json content) {
  json l = envelope("assistant", i);
  l["requestId"] = "req_" + std::to_string(i);
  l["message"] = {{"id", "msg_" + std::to_string(i)},
                  {"role", "assistant"},
                  {"model", "claude-sonnet-4-5"},
                  {"content", std::move(content)},
                  {"stop_reason", "tool_use"}};
  return l;
}

json user_result(unsigned i, const std::string& text, json extra) {
  json l = envelope("user", i);
  l["message"] = {{"role", "user"},
                  {"content",
                   {{{"type", "tool_result"},
                     {"tool_use_id", "toolu_" + std::to_string(i)},
                     {"content", text}}}}};
  l["toolUseResult"] = std::move(extra);
  return l;
}

// One round of a typical authoring turn: text, a read of a large file, a command, a write.
std::string claude_round(unsigned i) {
  std::string out;
  auto put = [&](const json& j) { out += j.dump() + "\n"; };
  put(assistant(i,
                {{{"type", "text"},
                  {"text", "Profiling shows the reduction is memory bound; " + filler(300, i)}}}));
  put(assistant(i + 1, {{{"type", "tool_use"},
                         {"id", "toolu_r"},
                         {"name", "Read"},
                         {"input", {{"file_path", "/home/ana/kern/src/rms.py"}}}}}));
  std::string file = filler(24000, i + 2);
  put(user_result(i + 2, file,
                  {{"type", "text"},
                   {"file", {{"filePath", "/home/ana/kern/src/rms.py"}, {"content", file}}}}));
  put(assistant(
      i + 3,
      {{{"type", "tool_use"},
        {"id", "toolu_b"},
        {"name", "Bash"},
        {"input",
         {{"command", "cd src && python bench.py --iters 50 > out.txt && tail -n 5 out.txt"}}}}}));
  std::string stdout_text = filler(3000, i + 4);
  put(user_result(i + 4, stdout_text,
                  {{"stdout", stdout_text}, {"stderr", ""}, {"interrupted", false}}));
  put(assistant(
      i + 5, {{{"type", "tool_use"},
               {"id", "toolu_w"},
               {"name", "Write"},
               {"input",
                {{"file_path", "/home/ana/kern/src/rms.py"}, {"content", filler(9000, i + 5)}}}}}));
  put({{"type", "progress"},
       {"uuid", "p" + std::to_string(i)},
       {"sessionId", "s"},
       {"data", {{"type", "bash_progress"}}}});
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: bench_audit_gen claude|kdispatch MIB\n");
    return 64;
  }
  std::string kind = argv[1];
  size_t target = std::strtoull(argv[2], nullptr, 10) << 20;
  size_t written = 0;
  if (kind == "claude") {
    for (unsigned i = 1; written < target; i += 8) {
      std::string round = claude_round(i);
      std::fwrite(round.data(), 1, round.size(), stdout);
      written += round.size();
    }
    return 0;
  }
  if (kind != "kdispatch") return 64;
  std::string prev(kd::contract::kZeroHash);
  std::uint64_t seq = 0;
  auto put = [&](const char* type, const json& data) {
    std::string line = kd::contract::seal_chain_line(
        {seq++, prev, "2026-03-02T10:00:00Z", "s-bench", "author", type, data.dump()}, &prev);
    line += '\n';
    std::fwrite(line.data(), 1, line.size(), stdout);
    written += line.size();
  };
  put("header",
      {{"worktree", "/wt"}, {"reference", {"ref/naive.py"}}, {"no_peek", {"answers/**"}}});
  for (unsigned i = 0; written < target; ++i) {
    put("response", {{"turn", i},
                     {"text", "Trying a wider tile. " + filler(400, i)},
                     {"tool_calls", json::array()}});
    put("tool_call", {{"id", "c" + std::to_string(i)},
                      {"name", "write_file"},
                      {"input", {{"path", "kernels/rms.py"}, {"content", filler(6000, i)}}}});
    put("tool_result", {{"id", "c" + std::to_string(i)},
                        {"name", "write_file"},
                        {"is_error", false},
                        {"content", "ok"}});
    put("tool_call", {{"id", "d" + std::to_string(i)},
                      {"name", "run_on_chip"},
                      {"input", {{"command", {"python", "bench.py", "--iters", "50"}}}}});
    put("tool_result", {{"id", "d" + std::to_string(i)},
                        {"name", "run_on_chip"},
                        {"is_error", false},
                        {"content", filler(4000, i + 1)},
                        {"exit_code", 0}});
  }
  put("end", {{"reason", "finished"}, {"finish", nullptr}});
  return 0;
}
