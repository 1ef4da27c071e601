// A transcript read for people (docs/report.md): the records of a kdispatch transcript
// (contract/transcript_records.h) as a list of entries the HTML viewer and `kdispatch transcript
// show` both draw. Tool results are joined to their calls; budget use is summed along the way;
// the chain is verified in the same pass. Both request forms are read: a full request body and
// a request that carries only what is new. Nothing here throws for content: a missing file, an
// unreadable line or an unknown record type becomes an entry or a problem that says so.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace kd::report {

struct ToolCallEntry {
  std::string id, name;
  std::string input;  // the arguments, pretty-printed JSON (or the raw text when not JSON)
  bool has_result = false;
  bool is_error = false;
  bool not_run = false;  // refused without counting
  std::string result;    // the content, or "(stored in blobs/<sha>, N bytes)"
  std::optional<int> exit_code;
  bool timed_out = false;
  std::string call_ts, result_ts;
};

struct Entry {
  enum class Kind {
    Header,
    Request,
    Response,
    ToolCall,
    Violation,
    Note,
    End,
    Unknown,
    Unreadable
  };
  Kind kind = Kind::Unknown;
  std::uint64_t line = 0;  // 1-based line in the file
  std::string ts;
  int turn = 0;
  std::string text;    // response text, note text, violation or end summary, request summary
  std::string detail;  // secondary text: stop reason, header fields, raw line of an unknown
  ToolCallEntry call;  // Kind::ToolCall
  std::vector<std::string> calls;  // Kind::Response: ids of the calls it made
  bool highlight = false;          // a refusal: violation, not-run or denied call, nudge
  // Budget use up to and including this record (responses carry them).
  long input_tokens = 0, output_tokens = 0, cache_read_tokens = 0, cache_write_tokens = 0;
  double cost_usd = 0;
};

struct TranscriptView {
  std::filesystem::path path;
  bool missing = false;   // no such file
  std::string problem;    // could not be read at all
  bool chain_ok = false;  // intact, ending with an end record
  std::uint64_t broken_line = 0;
  std::string chain_reason;
  std::string head;
  std::uint64_t lines = 0;
  std::string model, family, experiment, role;
  std::vector<Entry> entries;
  int turns = 0, tool_calls = 0, violations = 0;
  long input_tokens = 0, output_tokens = 0, cache_read_tokens = 0, cache_write_tokens = 0;
  double cost_usd = 0;
  std::string end_reason;  // empty: no end record
  std::string first_ts, last_ts;
  // run_on_chip calls: [start, end] stamps, for the chip timeline.
  struct ChipCall {
    std::string start, end;
  };
  std::vector<ChipCall> chip_calls;
  std::string chip;  // the header's chip
};

// Reads and verifies `path`. Contents are kept whole; renderers fold long ones.
TranscriptView read_transcript(const std::filesystem::path& path);

// What a renderer shows as the chain's state: "intact (N records)", "broken at line N: why",
// "no end record", "missing".
std::string chain_status(const TranscriptView& v);

}  // namespace kd::report
