#include "report/transcript_view.h"

#include <simdjson.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "common/files.h"
#include "contract/transcript_chain.h"
#include "contract/transcript_records.h"

// Records are read with simdjson's DOM parser: a report reads every line of hundreds of
// transcripts, and this is where its time goes (bench/report).
namespace kd::report {
namespace {

namespace dom = simdjson::dom;
namespace fs = std::filesystem;
namespace rec = contract::transcript;

// The member `key` of an object, or nullopt (absent, or `d` is not an object).
std::optional<dom::element> member(dom::element d, const char* key) {
  dom::element v;
  if (d.at_key(key).get(v)) return std::nullopt;
  return v;
}

std::string str(dom::element d, const char* key) {
  std::string_view s;
  auto v = member(d, key);
  return v && !v->get_string().get(s) ? std::string(s) : std::string();
}

long num(dom::element d, const char* key) {
  auto v = member(d, key);
  if (!v) return 0;
  switch (v->type()) {
    case dom::element_type::INT64:
      return static_cast<long>(int64_t(*v));
    case dom::element_type::UINT64:
      return static_cast<long>(uint64_t(*v));
    case dom::element_type::DOUBLE:
      return static_cast<long>(double(*v));
    default:
      return 0;
  }
}

bool flag(dom::element d, const char* key) {
  bool b = false;
  auto v = member(d, key);
  return v && !v->get_bool().get(b) && b;
}

size_t array_size(dom::element d, const char* key) {
  dom::array a;
  auto v = member(d, key);
  return v && !v->get_array().get(a) ? a.size() : 0;
}

bool is_array(dom::element d, const char* key) {
  auto v = member(d, key);
  return v && v->is_array();
}

// Pretty JSON for arguments; strings that were not JSON stay as they came.
std::string pretty(dom::element v) {
  std::string_view s;
  if (!v.get_string().get(s)) return std::string(s);
  return nlohmann::json::parse(simdjson::minify(v))
      .dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Tool arguments as people read them: each top-level field on its own line, a multi-line string
// (a file's content, a script) as a block under its name rather than one escaped JSON line.
std::string arguments(dom::element v) {
  dom::object o;
  if (v.get_object().get(o)) return pretty(v);
  std::string out;
  for (dom::key_value_pair kv : o) {
    std::string_view sv;
    std::string s = kv.value.get_string().get(sv) ? simdjson::minify(kv.value) : std::string(sv);
    std::string k(kv.key);
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
std::string content_of(dom::element d, const char* field, const fs::path& dir) {
  if (auto v = member(d, field)) return pretty(*v);
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
std::string request_summary(dom::element d) {
  std::string out = "attempt " + std::to_string(num(d, "attempt"));
  if (auto b = member(d, "body"); b && b->is_object())
    return out + ", full request: " + std::to_string(array_size(*b, "messages")) + " messages";
  if (member(d, "body_ref"))
    return out + ", full request stored in blobs/ (" + std::to_string(num(d, "body_bytes")) +
           " bytes)";
  if (is_array(d, "append")) {
    size_t r = array_size(d, "refs");
    return out + ", " + std::to_string(num(d, "keep")) + " messages kept, " +
           std::to_string(array_size(d, "append")) + " new" +
           (r ? " (" + std::to_string(r) + " tool output" + (r == 1 ? "" : "s") + " by reference)"
              : "");
  }
  if (member(d, "append_ref"))
    return out + ", " + std::to_string(num(d, "keep")) +
           " messages kept, the new ones stored in blobs/ (" +
           std::to_string(num(d, "append_bytes")) + " bytes)";
  for (const char* k : {"new_messages", "delta", "messages", "appended"}) {
    if (is_array(d, k)) {
      size_t n = array_size(d, k);
      return out + ", " + std::to_string(n) + " new message" + (n == 1 ? "" : "s");
    }
  }
  return out;
}

// Cache tokens under the names the providers use.
void add_usage(dom::element u, Entry& e) {
  e.input_tokens = num(u, "input_tokens");
  e.output_tokens = num(u, "output_tokens");
  e.cache_read_tokens = num(u, "cache_read_input_tokens") + num(u, "cache_read_tokens");
  e.cache_write_tokens = num(u, "cache_creation_input_tokens") + num(u, "cache_write_tokens");
}

class Reader {
 public:
  explicit Reader(TranscriptView& v) : v_(v), dir_(v.path.parent_path()) {
    if (empty_parser_.parse(std::string_view("{}")).get(empty_))
      throw Error("simdjson cannot parse \"{}\"");
  }

  // `text` must be followed by simdjson::SIMDJSON_PADDING readable bytes.
  void line(std::string_view text, std::uint64_t no) {
    chain_.feed(text);
    dom::element r;
    Entry e;
    e.line = no;
    if (parser_.parse(text.data(), text.size(), false).get(r) || !r.is_object() ||
        !member(r, "type")) {
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
    dom::element d = empty_;
    if (auto data = member(r, "data"); data && data->is_object()) d = *data;
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
      e.highlight = bool(member(d, "nudge"));
      if (member(d, "message")) e.detail = str(d, "message");
    } else if (type == rec::kDecision) {
      decision(d, e);
    } else if (type == rec::kEnd) {
      e.kind = Entry::Kind::End;
      v_.end_reason = str(d, "reason");
      e.text = v_.end_reason.empty() ? "ended" : v_.end_reason;
      auto f = member(d, "finish");
      e.detail = f && !f->is_null() ? pretty(*f) : "";
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
  static void decision(dom::element d, Entry& e) {
    e.kind = Entry::Kind::Note;
    const std::string what = str(d, "decision");
    std::string about;
    dom::array cmd;
    if (auto c = member(d, "command"); c && !c->get_array().get(cmd)) {
      for (dom::element w : cmd) {
        std::string_view s;
        about += (about.empty() ? "" : " ") +
                 (w.get_string().get(s) ? simdjson::minify(w) : std::string(s));
      }
    } else {
      const std::string message = str(d, "message");
      about = message.substr(0, message.find('\n'));
    }
    e.text = "supervisor " + what + " " + str(d, "tool") + " `" + about + "`";
    if (what == "denied") e.text += ": " + str(d, "reason");
    if (what == "note") e.text += ": " + str(d, "text");
    if (auto p = member(d, "prefix")) e.text += " (prefix " + simdjson::minify(*p) + ")";
    e.call.id = str(d, "tool_call_id");
    e.highlight = what == "denied" || what == "stopped" || what == "note";
  }

  void header(dom::element r, dom::element d, Entry& e) {
    e.kind = Entry::Kind::Header;
    v_.role = str(r, "role");
    v_.family = str(d, "family");
    v_.experiment = str(d, "experiment");
    if (auto m = member(d, "model"); m && m->is_object())
      v_.model = str(*m, "provider") + " " + str(*m, "name");
    if (auto c = member(d, "chip"); c && c->is_string()) v_.chip = str(d, "chip");
    e.text = v_.role + " session " + str(r, "session");
    e.detail = "model " + v_.model + (v_.chip.empty() ? "" : ", chip " + v_.chip) + ", worktree " +
               str(d, "worktree");
  }

  void response(dom::element d, Entry& e) {
    e.kind = Entry::Kind::Response;
    e.turn = static_cast<int>(num(d, "turn"));
    v_.turns = std::max(v_.turns, e.turn);
    e.text = str(d, "text");
    e.detail = str(d, "stop_reason");
    if (auto u = member(d, "usage"); u && u->is_object()) {
      Entry delta;
      add_usage(*u, delta);
      v_.input_tokens += delta.input_tokens;
      v_.output_tokens += delta.output_tokens;
      v_.cache_read_tokens += delta.cache_read_tokens;
      v_.cache_write_tokens += delta.cache_write_tokens;
    }
    double cost = 0;
    if (auto c = member(d, "cost_usd"); c && c->is_number() && !c->get_double().get(cost))
      v_.cost_usd += cost;
    dom::array calls;
    if (auto c = member(d, "tool_calls"); c && !c->get_array().get(calls))
      for (dom::element call : calls)
        if (call.is_object()) e.calls.push_back(str(call, "id"));
  }

  void tool_call(dom::element d, Entry& e) {
    e.kind = Entry::Kind::ToolCall;
    e.call.id = str(d, "id");
    e.call.name = str(d, "name");
    e.call.call_ts = e.ts;
    auto in = member(d, "input");
    e.call.input = in ? arguments(*in) : str(d, "input_raw");
    ++v_.tool_calls;
    calls_[e.call.id] = v_.entries.size();
  }

  void tool_result(dom::element d, Entry& e) {
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
    c.is_error = flag(d, "is_error");
    c.not_run = flag(d, "not_run");
    c.result = content_of(d, "content", dir_);
    c.result_ts = e.ts;
    if (auto x = member(d, "exit_code"); x && (x->is_int64() || x->is_uint64()))
      c.exit_code = static_cast<int>(num(d, "exit_code"));
    c.timed_out = flag(d, "timed_out");
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
  dom::parser parser_;        // one record's document at a time
  dom::parser empty_parser_;  // holds empty_
  dom::element empty_;        // `{}`, for a record without a data object: its fields are absent
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
    text.reserve(text.size() + simdjson::SIMDJSON_PADDING);  // the parser reads past a line
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
