#include "tests/support/fixtures.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "contract/transcript_chain.h"

namespace kd::test {

void TranscriptBuilder::add(const std::string& type, const nlohmann::json& data,
                            const std::string& ts) {
  contract::ChainRecord r;
  r.seq = seq_++;
  r.prev = prev_.empty() ? std::string(contract::kZeroHash) : prev_;
  r.ts = ts;
  r.session = "s-test";
  r.role = role_;
  r.type = type;
  r.data_json = data.dump();
  text_ += contract::seal_chain_line(r, &prev_) + "\n";
}

void TranscriptBuilder::header(const std::string& worktree,
                               const std::vector<std::string>& reference,
                               const std::vector<std::string>& no_peek,
                               const std::string& artifact_dir) {
  add("header",
      {{"kdispatch", "0.1.0"},
       {"family", "rms"},
       {"experiment", "v001"},
       {"brief_sha256", std::string(64, 'a')},
       {"policies", nlohmann::json::object()},
       {"model", {{"provider", "fake"}, {"name", "scripted"}, {"base_url", "http://127.0.0.1:1"}}},
       {"chip", "0"},
       {"worktree", worktree},
       {"reference", reference},
       {"no_peek", no_peek},
       {"artifact_dir", artifact_dir}});
}

void TranscriptBuilder::tool_call(const std::string& name, const nlohmann::json& input,
                                  const std::string& ts) {
  std::string id = "call_" + std::to_string(seq_);
  add("tool_call", {{"id", id}, {"name", name}, {"input", input}}, ts);
  add("tool_result", {{"id", id}, {"name", name}, {"is_error", false}, {"content", "ok"}}, ts);
}

void TranscriptBuilder::end(const nlohmann::json& finish) {
  add("end", {{"reason", "finished"},
              {"finish", finish},
              {"turns", 3},
              {"input_tokens", 10},
              {"output_tokens", 5},
              {"cost_usd", 0.0}});
}

std::string TranscriptBuilder::write(const TempDir& dir, const std::string& rel) const {
  std::string path = dir / rel;
  write_text(path, text_);
  return path;
}

std::string claude_tool_line(const std::string& cwd, const std::string& name,
                             const nlohmann::json& input) {
  nlohmann::json line = {
      {"type", "assistant"},
      {"uuid", "u-" + name},
      {"sessionId", "sess-1"},
      {"cwd", cwd},
      {"timestamp", "2026-03-02T10:00:00.000Z"},
      {"message",
       {{"id", "msg_1"},
        {"role", "assistant"},
        {"content",
         {{{"type", "tool_use"}, {"id", "toolu_1"}, {"name", name}, {"input", input}}}}}}};
  return line.dump() + "\n";
}

std::string claude_text_line(const std::string& cwd, const std::string& text) {
  nlohmann::json line = {{"type", "assistant"},
                         {"uuid", "u-text"},
                         {"sessionId", "sess-1"},
                         {"cwd", cwd},
                         {"timestamp", "2026-03-02T10:00:00.000Z"},
                         {"message",
                          {{"id", "msg_2"},
                           {"role", "assistant"},
                           {"content", {{{"type", "text"}, {"text", text}}}}}}};
  return line.dump() + "\n";
}

std::string ledger_text(bool loaded_line, const std::vector<std::vector<std::string>>& rows) {
  std::string out;
  if (loaded_line)
    out += "loaded: [wiki/kernel_experiments/BRIEFS.md, wiki/concepts/pallas-kernel.md]\n";
  out +=
      "| candidate | class | committed SHA | parity (max abs / max rel) | p50 ms (author-side) | "
      "vs naive | receipt | why kept/rejected |\n";
  out += "|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : rows) {
    out += "|";
    for (const auto& c : r)
      out += " " + c + " |";
    out += "\n";
  }
  return out;
}

const char* const kPassVerifyReceipt =
    "{'cmd':'verify','verdict':'PASS','mode':'full','gates':{'parity':True,'measure':True},"
    "'speedup':1.25,'p50_ms':{'baseline':2.5,'candidate':2.0},'parity_verdict':'PASS',"
    "'measure_verdict':'PASS','hlo_audit':{'status':'fired','custom_call_count':2,'checks':[]},"
    "'reproduction':'kgate verify','artifact_dir':'a','anomalies':[]}";

std::string python_receipt(const std::string& path, const std::string& dict,
                           const std::string& mutate) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::string code =
      "import json,hashlib,sys\n"
      "nan=float('nan'); inf=float('inf')\n"
      "obj=" +
      dict +
      "\n"
      "canon=json.dumps(obj,sort_keys=True,separators=(',',':'),default=str)\n"
      "obj['self_sha256']=hashlib.sha256(canon.encode()).hexdigest()\n" +
      mutate +
      "\n"
      "open(sys.argv[1],'w').write(json.dumps(obj,indent=2))\n";
  auto r = run_process({"/usr/bin/python3", "-c", code, path});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return path;
}

void write_text(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

}  // namespace kd::test
