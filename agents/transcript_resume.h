// Rebuilding a session from its transcript after a crash (docs/dispatcher.md): the chain is
// verified, a torn last line is set aside to be cut, the conversation is taken up to the last
// complete turn, and the session's counters are summed over every record, so a resumed session goes
// on with the same budgets and never pays for a turn twice. Tool outputs a masking note named
// are masked again, so the rebuilt conversation is the one the model last saw.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "agents/transcript_writer.h"
#include "agents/types.h"

namespace kd::agents {

struct ResumeState {
  ChainTail tail;                     // where the intact chain ends
  nlohmann::json header;              // the header record's data; null when there is none
  std::optional<nlohmann::json> end;  // the end record's data, when the session ended

  // The conversation after the first user message, up to the last complete turn: a response
  // whose tool calls all have recorded results (a response without tool calls is complete by
  // itself), and the nudges that followed such responses.
  std::vector<Message> messages;
  int kept_turns = 0;
  // The last response when some of its tool calls have no recorded result: it is dropped and
  // the model is asked that turn again. `dropped_calls` are its calls that have a tool_call
  // record, so the host may have run them.
  int dropped_turns = 0;
  std::vector<ToolCall> dropped_calls;
  // An accepted finish in a kept turn (the session ended but its end record was not written).
  std::optional<nlohmann::json> finish;

  // Counters over the whole transcript, the dropped turn included: it was paid for, and its
  // calls may have run.
  int turns = 0;  // model responses
  int tool_calls = 0;
  long input_tokens = 0;
  long output_tokens = 0;
  long cost_microusd = 0;
  long cache_read_tokens = 0;
  long cache_write_tokens = 0;
  int masking_steps = 0;
  // The last request's size as sent and the input tokens the provider counted for it (0 when
  // none was recorded): the context window's estimate picks up where it was, so a resumed
  // session masks when the original would have.
  long calibration_bytes = 0;
  long calibration_tokens = 0;
  bool usage_estimated = false;
  int nudges = 0;
  double active_s = 0;  // wall time of the session's processes, from the records' timestamps
};

// Reads `dir`/transcript.jsonl. A missing or empty file gives an empty state (nothing was
// recorded; the session starts afresh). Throws kd::Error naming the file and the line for a
// broken chain, a record that does not fit the conversation, a missing blob, or a transcript
// written before resumable records (responses without `echo`).
ResumeState read_resume_state(const std::filesystem::path& dir);

}  // namespace kd::agents
