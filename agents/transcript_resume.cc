#include "agents/transcript_resume.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <set>

#include "agents/context_window.h"
#include "common/agent_file.h"
#include "common/errors.h"
#include "common/files.h"
#include "common/sha256.h"
#include "common/time.h"
#include "contract/transcript_chain.h"
#include "contract/transcript_records.h"

namespace kd::agents {
namespace {

// A tool result kept as a blob is at most what a tool returns; far more is not a blob we wrote.
constexpr std::uint64_t kMaxBlobBytes = 1ull << 30;

using json = nlohmann::json;
namespace fs = std::filesystem;
namespace records = contract::transcript;

// Seconds since the epoch of a record's stamp.
double parse_ts(const std::string& ts) {
  auto t = parse_rfc3339(ts);
  if (!t) throw Error("ts " + quote(ts) + " is not an RFC 3339 time");
  return *t;
}

// Folds records, in chain order, into the conversation and the counters.
class Rebuilder {
 public:
  Rebuilder(fs::path dir, ResumeState& st) : dir_(std::move(dir)), st_(st) {}

  void record(const json& rec) {
    const std::string type = rec.at("type").get<std::string>();
    const json& d = rec.at("data");
    seq_ = rec.at("seq").get<long>();
    double ts = parse_ts(rec.at("ts").get<std::string>());
    if (type == records::kHeader) {
      st_.header = d;
      segment_start_ = ts;
    } else if (type == records::kRequest) {
      request_bytes_ = d.value("bytes", 0L);
    } else if (type == records::kResponse) {
      response(d);
    } else if (type == records::kToolCall) {
      tool_call(d);
    } else if (type == records::kToolResult) {
      tool_result(d);
    } else if (type == records::kNote) {
      if (d.contains("nudge")) {
        st_.nudges = d.at("nudge").get<int>();
        st_.messages.push_back({Message::Kind::user, d.at("message").get<std::string>(), {}, {}});
      }
      if (d.contains("masked")) masked(d.at("masked"));
      if (d.contains("resumed")) {
        // The turn a previous crash left half done was dropped then; this process's time
        // starts here.
        pending_.reset();
        st_.active_s += last_ts_ - segment_start_;
        segment_start_ = ts;
      }
    } else if (type == records::kEnd) {
      st_.end = d;
    }
    last_ts_ = ts;
  }

  void finish() {
    st_.active_s += last_ts_ - segment_start_;
    if (pending_) {
      st_.dropped_turns = 1;
      for (const auto& c : pending_->turn.tool_calls) {
        if (pending_->started.count(c.id)) st_.dropped_calls.push_back(c);
      }
    }
  }

 private:
  struct Pending {
    AssistantTurn turn;
    std::vector<ToolResult> results;
    std::set<std::string> started;  // ids with a tool_call record
  };

  void response(const json& d) {
    if (!d.contains("echo")) {
      throw Error(
          "response has no echo: the transcript was written before resumable records and "
          "cannot be continued exactly");
    }
    AssistantTurn t;
    t.text = d.at("text").get<std::string>();
    t.stop_reason = d.at("stop_reason").get<std::string>();
    t.request_id = d.value("request_id", "");
    t.echo = d.at("echo");
    const json& u = d.at("usage");
    t.usage.input_tokens = u.at("input_tokens").get<long>();
    t.usage.output_tokens = u.at("output_tokens").get<long>();
    t.usage.reported = u.at("reported").get<bool>();
    if (t.usage.reported && request_bytes_ > 0) {
      st_.calibration_bytes = request_bytes_;
      st_.calibration_tokens = t.usage.input_tokens;
    }
    if (u.contains("cache_read_tokens"))
      t.usage.cache_read_tokens = u["cache_read_tokens"].get<long>();
    if (u.contains("cache_write_5m_tokens"))
      t.usage.cache_write_5m_tokens = u["cache_write_5m_tokens"].get<long>();
    if (u.contains("cache_write_1h_tokens"))
      t.usage.cache_write_1h_tokens = u["cache_write_1h_tokens"].get<long>();
    for (const auto& c : d.at("tool_calls")) {
      ToolCall call;
      call.id = c.at("id").get<std::string>();
      call.name = c.at("name").get<std::string>();
      call.input = c.at("input");
      call.input_is_json = !c.contains("input_raw");
      call.input_raw = call.input_is_json ? call.input.dump() : c["input_raw"].get<std::string>();
      t.tool_calls.push_back(std::move(call));
    }
    ++st_.turns;
    st_.input_tokens += t.usage.input_tokens;
    st_.output_tokens += t.usage.output_tokens;
    // Transcripts before integer costs carry dollars only.
    st_.cost_microusd += d.contains("cost_microusd")
                             ? d["cost_microusd"].get<long>()
                             : static_cast<long>(d.at("cost_usd").get<double>() * 1e6 + 0.5);
    st_.cache_read_tokens += t.usage.cache_read_tokens.value_or(0);
    st_.cache_write_tokens +=
        t.usage.cache_write_5m_tokens.value_or(0) + t.usage.cache_write_1h_tokens.value_or(0);
    if (!t.usage.reported) st_.usage_estimated = true;
    pending_.reset();  // a response after a half-done turn: that turn was asked again
    if (t.tool_calls.empty()) {
      st_.messages.push_back({Message::Kind::assistant, {}, std::move(t), {}});
      ++st_.kept_turns;
      return;
    }
    pending_ = Pending{std::move(t), {}, {}};
  }

  const ToolCall& expected_call(const std::string& id, const char* what) {
    if (!pending_) throw Error(std::string(what) + " " + quote(id) + " follows no open response");
    const auto& calls = pending_->turn.tool_calls;
    size_t next = pending_->results.size();
    if (next >= calls.size() || calls[next].id != id) {
      throw Error(std::string(what) + " " + quote(id) + " where the response's call " +
                  (next < calls.size() ? quote(calls[next].id) : std::string("(none)")) +
                  " was next");
    }
    return calls[next];
  }

  void tool_call(const json& d) {
    const ToolCall& c = expected_call(d.at("id").get<std::string>(), records::kToolCall);
    if (pending_->started.insert(c.id).second) ++st_.tool_calls;
  }

  void tool_result(const json& d) {
    const ToolCall& c = expected_call(d.at("id").get<std::string>(), records::kToolResult);
    ToolResult r{c.id, c.name, content(d), d.at("is_error").get<bool>(), seq_, false};
    if (d.value("not_run", false)) --st_.tool_calls;
    bool accepted_finish = c.name == "finish" && !r.is_error && !d.value("not_run", false);
    if (accepted_finish) st_.finish = c.input;
    pending_->results.push_back(std::move(r));
    if (pending_->results.size() < pending_->turn.tool_calls.size()) return;
    st_.messages.push_back({Message::Kind::assistant, {}, std::move(pending_->turn), {}});
    st_.messages.push_back({Message::Kind::tool_results, {}, {}, std::move(pending_->results)});
    ++st_.kept_turns;
    pending_.reset();
  }

  std::string content(const json& d) {
    if (d.contains("content")) return d["content"].get<std::string>();
    std::string digest = d.at("content_ref").get<std::string>();
    fs::path blob = dir_ / "blobs" / digest;
    if (!fs::exists(fs::symlink_status(blob)))
      throw Error("blob " + quote(blob.string()) + " is missing");
    // Read back as every file of a run is: beneath its directory, no link, a regular file.
    std::string bytes = read_agent_file(dir_ / "blobs", digest, kMaxBlobBytes);
    if (sha256_hex(bytes) != digest) {
      throw Error("blob " + quote(blob.string()) + " does not match its digest");
    }
    return bytes;
  }

  // A masking step: the named outputs of kept turns become their stubs again.
  void masked(const json& list) {
    ++st_.masking_steps;
    std::map<std::string, long> ids;
    for (const auto& m : list)
      ids[m.at("id").get<std::string>()] = m.at("seq").get<long>();
    for (Message& m : st_.messages) {
      if (m.kind != Message::Kind::tool_results) continue;
      for (ToolResult& r : m.results) {
        auto it = ids.find(r.tool_call_id);
        if (it == ids.end() || r.masked) continue;
        if (it->second != r.record_seq) {
          throw Error("masking note names " + quote(r.tool_call_id) + " at record " +
                      std::to_string(it->second) + "; its result is record " +
                      std::to_string(r.record_seq));
        }
        r.content = mask_stub(r.name, r.record_seq);
        r.masked = true;
      }
    }
  }

  fs::path dir_;
  ResumeState& st_;
  std::optional<Pending> pending_;
  long seq_ = 0;
  long request_bytes_ = 0;  // the last request record's size as sent
  double segment_start_ = 0, last_ts_ = 0;
};

}  // namespace

ResumeState read_resume_state(const fs::path& dir) {
  ResumeState st;
  st.tail.head = std::string(contract::kZeroHash);
  fs::path path = dir / "transcript.jsonl";
  std::string where = quote(path.string());
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return st;
    throw_sys("open", where, errno);
  }
  struct stat file_stat;
  if (::fstat(fd, &file_stat) != 0 || !S_ISREG(file_stat.st_mode)) {
    ::close(fd);
    throw Error(where + " is not a regular file; not resumed from");
  }
  contract::ChainVerifier verifier;
  Rebuilder rebuild(dir, st);
  std::string carry;  // a line that spans reads, then the torn tail
  std::string buf(1 << 20, '\0');
  auto line = [&](std::string_view text) {
    std::uint64_t n = st.tail.records + 1;
    if (st.end) throw Error(where + " line " + std::to_string(n) + ": a record after the end");
    if (!verifier.feed(text)) {
      throw Error(where + " line " + std::to_string(n) + ": " + verifier.finish(true).reason +
                  "; the chain is broken, not resumable");
    }
    try {
      rebuild.record(json::parse(text));
    } catch (const std::exception& e) {
      throw Error(where + " line " + std::to_string(n) + ": " + e.what());
    }
    ++st.tail.records;
    st.tail.bytes += text.size() + 1;
  };
  try {
    for (;;) {
      ssize_t n = ::read(fd, buf.data(), buf.size());
      if (n < 0) {
        if (errno == EINTR) continue;
        throw_sys("read", where, errno);
      }
      if (n == 0) break;
      std::string_view chunk(buf.data(), static_cast<size_t>(n));
      size_t start = 0;
      for (size_t nl; (nl = chunk.find('\n', start)) != std::string_view::npos; start = nl + 1) {
        if (carry.empty()) {
          line(chunk.substr(start, nl - start));
        } else {
          carry.append(chunk.substr(start, nl - start));
          line(carry);
          carry.clear();
        }
      }
      carry.append(chunk.substr(start));
    }
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  st.tail.torn_bytes = carry.size();
  if (st.end && st.tail.torn_bytes > 0) {
    throw Error(where + ": " + std::to_string(st.tail.torn_bytes) + " bytes after the end record");
  }
  if (st.tail.records > 0) st.tail.head = verifier.finish(true).head;
  rebuild.finish();
  return st;
}

}  // namespace kd::agents
