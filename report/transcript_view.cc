#include "report/transcript_view.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "common/files.h"
#include "contract/transcript_chain.h"
#include "contract/transcript_records.h"

namespace kd::report {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;
namespace rec = contract::transcript;

std::string str(const json& d, const char* key) {
  auto it = d.find(key);
  return it != d.end() && it->is_string() ? it->get<std::string>() : std::string();
}

long num(const json& d, const char* key) {
  auto it = d.find(key);
  return it != d.end() && it->is_number() ? it->get<long>() : 0;
}

// Pretty JSON for arguments; strings that were not JSON stay as they came.
std::string pretty(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  return v.dump(2, ' ', false, json::error_handler_t::replace);
}

// Tool arguments as people read them: each top-level field on its own line, a multi-line string
// (a file's content, a script) as a block under its name rather than one escaped JSON line.
std::string arguments(const json& v) {
  if (!v.is_object()) return pretty(v);
  std::string out;
  for (const auto& [k, x] : v.items()) {
    std::string s = x.is_string() ? x.get<std::string>()
                                  : x.dump(-1, ' ', false, json::error_handler_t::replace);
    if (s.find('\n') != std::string::npos)
      out += k + ":\n" + s + (s.back() == '\n' ? "" : "\n");
    else
      out += k + ": " + s + "\n";
  }
  if (!out.empty()) out.pop_back();
  return out;
}

// A field stored beside the transcript (`<field>_ref`, docs/transcripts.md): the blob's content
// when it is there, else a line that says where it should be.
std::string content_of(const json& d, const char* field, const fs::path& dir) {
  auto it = d.find(field);
  if (it != d.end()) return it->is_string() ? it->get<std::string>() : pretty(*it);
  std::string ref = str(d, (std::string(field) + "_ref").c_str());
  if (ref.empty()) return "";
  fs::path blob = dir / "blobs" / ref;
  // A digest is hex: anything else is not read as a path.
  if (ref.find_first_not_of("0123456789abcdef") == std::string::npos) {
    std::error_code ec;
    if (fs::is_regular_file(blob, ec)) {
      try {
        return read_file(blob);
      } catch (const std::exception&) {
      }
    }
  }
  return "(stored in blobs/" + ref + ", " +
         std::to_string(num(d, (std::string(field) + "_bytes").c_str())) + " bytes, not found)";
}

// One line of what a request carried: the whole conversation, or what is new since the last.
std::string request_summary(const json& d) {
  std::string out = "attempt " + std::to_string(num(d, "attempt"));
  if (auto b = d.find("body"); b != d.end() && b->is_object()) {
    auto m = b->find("messages");
    size_t n = m != b->end() && m->is_array() ? m->size() : 0;
    return out + ", full request: " + std::to_string(n) + " messages";
  }
  if (d.contains("body_ref"))
    return out + ", full request stored in blobs/ (" + std::to_string(num(d, "body_bytes")) +
           " bytes)";
  if (auto a = d.find("append"); a != d.end() && a->is_array()) {
    auto refs = d.find("refs");
    size_t r = refs != d.end() && refs->is_array() ? refs->size() : 0;
    return out + ", " + std::to_string(num(d, "keep")) + " messages kept, " +
           std::to_string(a->size()) + " new" +
           (r ? " (" + std::to_string(r) + " tool output" + (r == 1 ? "" : "s") + " by reference)"
              : "");
  }
  if (d.contains("append_ref"))
    return out + ", " + std::to_string(num(d, "keep")) +
           " messages kept, the new ones stored in blobs/ (" +
           std::to_string(num(d, "append_bytes")) + " bytes)";
  for (const char* k : {"new_messages", "delta", "messages", "appended"}) {
    auto it = d.find(k);
    if (it != d.end() && it->is_array())
      return out + ", " + std::to_string(it->size()) + " new message" +
             (it->size() == 1 ? "" : "s");
  }
  return out;
}

// Cache tokens under the names the providers use.
void add_usage(const json& u, Entry& e) {
  e.input_tokens = num(u, "input_tokens");
  e.output_tokens = num(u, "output_tokens");
  e.cache_read_tokens = num(u, "cache_read_input_tokens") + num(u, "cache_read_tokens");
  e.cache_write_tokens = num(u, "cache_creation_input_tokens") + num(u, "cache_write_tokens");
}

class Reader {
 public:
  explicit Reader(TranscriptView& v) : v_(v), dir_(v.path.parent_path()) {}

  void line(std::string_view text, std::uint64_t no) {
    chain_.feed(text);
    json r = json::parse(text, nullptr, false);
    Entry e;
    e.line = no;
    if (!r.is_object() || !r.contains("type")) {
      e.kind = Entry::Kind::Unreadable;
      e.text = "line " + std::to_string(no) + " is not a transcript record";
      e.detail = std::string(text.substr(0, 400));
      v_.entries.push_back(std::move(e));
      return;
    }
    e.ts = str(r, "ts");
    if (v_.first_ts.empty()) v_.first_ts = e.ts;
    if (!e.ts.empty()) v_.last_ts = e.ts;
    const std::string type = str(r, "type");
    static const json kEmpty = json::object();
    auto dit = r.find("data");
    const json& d = dit != r.end() && dit->is_object() ? *dit : kEmpty;
    if (type == rec::kHeader) {
      header(r, d, e);
    } else if (type == rec::kRequest) {
      e.kind = Entry::Kind::Request;
      e.turn = static_cast<int>(num(d, "turn"));
      e.text = request_summary(d);
    } else if (type == rec::kResponse) {
      response(d, e);
    } else if (type == rec::kToolCall) {
      tool_call(d, e);
    } else if (type == rec::kToolResult) {
      tool_result(d, e);
      return;  // joined to its call
    } else if (type == rec::kViolation) {
      e.kind = Entry::Kind::Violation;
      e.highlight = true;
      e.text = str(d, "layer") + " refused " + str(d, "op") +
               (str(d, "path").empty() ? "" : " " + str(d, "path"));
      e.detail = str(d, "detail");
      e.call.id = str(d, "tool_call_id");
      ++v_.violations;
    } else if (type == rec::kNote) {
      e.kind = Entry::Kind::Note;
      e.text = str(d, "text");
      e.highlight = d.contains("nudge");
      if (d.contains("message")) e.detail = str(d, "message");
    } else if (type == rec::kDecision) {
      decision(d, e);
    } else if (type == rec::kEnd) {
      e.kind = Entry::Kind::End;
      v_.end_reason = str(d, "reason");
      e.text = v_.end_reason.empty() ? "ended" : v_.end_reason;
      auto f = d.find("finish");
      e.detail = f != d.end() && !f->is_null() ? pretty(*f) : "";
    } else {
      e.kind = Entry::Kind::Unknown;
      e.text = "record of type " + type;
      e.detail = pretty(d);
    }
    stamp_budget(e);
    v_.entries.push_back(std::move(e));
  }

  void finish(bool last_line_complete) {
    contract::ChainReport c = chain_.finish(last_line_complete);
    v_.chain_ok = c.ok;
    v_.broken_line = c.broken_line;
    v_.chain_reason = c.reason;
    v_.head = c.head;
    v_.lines = c.lines;
  }

 private:
  // "supervisor denied run `make -j`: use the screen mode first", shown as a note.
  static void decision(const json& d, Entry& e) {
    e.kind = Entry::Kind::Note;
    const std::string what = str(d, "decision");
    std::string about;
    auto cmd = d.find("command");
    if (cmd != d.end() && cmd->is_array()) {
      for (const auto& w : *cmd)
        about += (about.empty() ? "" : " ") + (w.is_string() ? w.get<std::string>() : w.dump());
    } else {
      about = str(d, "message").substr(0, str(d, "message").find('\n'));
    }
    e.text = "supervisor " + what + " " + str(d, "tool") + " `" + about + "`";
    if (what == "denied") e.text += ": " + str(d, "reason");
    if (what == "note") e.text += ": " + str(d, "text");
    if (d.contains("prefix")) e.text += " (prefix " + d["prefix"].dump() + ")";
    e.call.id = str(d, "tool_call_id");
    e.highlight = what == "denied" || what == "stopped" || what == "note";
  }

  void header(const json& r, const json& d, Entry& e) {
    e.kind = Entry::Kind::Header;
    v_.role = str(r, "role");
    v_.family = str(d, "family");
    v_.experiment = str(d, "experiment");
    if (auto m = d.find("model"); m != d.end() && m->is_object())
      v_.model = str(*m, "provider") + " " + str(*m, "name");
    if (auto c = d.find("chip"); c != d.end() && c->is_string()) v_.chip = c->get<std::string>();
    e.text = v_.role + " session " + str(r, "session");
    e.detail = "model " + v_.model + (v_.chip.empty() ? "" : ", chip " + v_.chip) + ", worktree " +
               str(d, "worktree");
  }

  void response(const json& d, Entry& e) {
    e.kind = Entry::Kind::Response;
    e.turn = static_cast<int>(num(d, "turn"));
    v_.turns = std::max(v_.turns, e.turn);
    e.text = str(d, "text");
    e.detail = str(d, "stop_reason");
    if (auto u = d.find("usage"); u != d.end() && u->is_object()) {
      Entry delta;
      add_usage(*u, delta);
      v_.input_tokens += delta.input_tokens;
      v_.output_tokens += delta.output_tokens;
      v_.cache_read_tokens += delta.cache_read_tokens;
      v_.cache_write_tokens += delta.cache_write_tokens;
    }
    if (auto c = d.find("cost_usd"); c != d.end() && c->is_number())
      v_.cost_usd += c->get<double>();
    if (auto calls = d.find("tool_calls"); calls != d.end() && calls->is_array()) {
      for (const auto& c : *calls)
        if (c.is_object()) e.calls.push_back(str(c, "id"));
    }
  }

  void tool_call(const json& d, Entry& e) {
    e.kind = Entry::Kind::ToolCall;
    e.call.id = str(d, "id");
    e.call.name = str(d, "name");
    e.call.call_ts = e.ts;
    auto in = d.find("input");
    e.call.input = in != d.end() ? arguments(*in) : str(d, "input_raw");
    ++v_.tool_calls;
    calls_[e.call.id] = v_.entries.size();
  }

  void tool_result(const json& d, Entry& e) {
    auto at = calls_.find(str(d, "id"));
    Entry* target = nullptr;
    if (at != calls_.end()) {
      target = &v_.entries[at->second];
    } else {  // a result without its call: shown on its own
      e.kind = Entry::Kind::ToolCall;
      e.call.id = str(d, "id");
      e.call.name = str(d, "name");
      e.call.input = "(no tool_call record)";
      stamp_budget(e);
      v_.entries.push_back(e);
      target = &v_.entries.back();
    }
    ToolCallEntry& c = target->call;
    c.has_result = true;
    c.is_error = d.value("is_error", false);
    c.not_run = d.value("not_run", false);
    c.result = content_of(d, "content", dir_);
    c.result_ts = e.ts;
    if (auto x = d.find("exit_code"); x != d.end() && x->is_number_integer())
      c.exit_code = x->get<int>();
    c.timed_out = d.value("timed_out", false);
    target->highlight =
        target->highlight || c.not_run || c.result.find("[sandbox denied") != std::string::npos;
    if (c.name == "run_on_chip") v_.chip_calls.push_back({c.call_ts, c.result_ts});
  }

  void stamp_budget(Entry& e) const {
    e.input_tokens = v_.input_tokens;
    e.output_tokens = v_.output_tokens;
    e.cache_read_tokens = v_.cache_read_tokens;
    e.cache_write_tokens = v_.cache_write_tokens;
    e.cost_usd = v_.cost_usd;
  }

  TranscriptView& v_;
  fs::path dir_;
  contract::ChainVerifier chain_;
  std::map<std::string, size_t> calls_;  // tool call id -> entry index
};

}  // namespace

TranscriptView read_transcript(const fs::path& path) {
  TranscriptView v;
  v.path = path;
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    v.missing = true;
    v.problem = "no transcript at " + path.string();
    return v;
  }
  std::string text;
  try {
    text = read_file(path);
  } catch (const std::exception& e) {
    v.problem = e.what();
    return v;
  }
  v.entries.reserve(static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) + 1);
  Reader r(v);
  std::uint64_t no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view line(text.data() + pos, (nl == std::string::npos ? text.size() : nl) - pos);
    r.line(line, ++no);
    if (nl == std::string::npos) break;
    pos = nl + 1;
  }
  r.finish(text.empty() || text.back() == '\n');
  return v;
}

std::string chain_status(const TranscriptView& v) {
  if (v.missing) return "missing";
  if (!v.problem.empty()) return "unreadable: " + v.problem;
  if (v.chain_ok) return "intact (" + std::to_string(v.lines) + " records)";
  if (v.broken_line)
    return "broken at line " + std::to_string(v.broken_line) + ": " + v.chain_reason;
  return v.chain_reason.empty() ? "incomplete" : v.chain_reason;
}

}  // namespace kd::report
