// Keeping a long session inside its model's context window by observation masking
// (docs/agents.md "Context window"): when the next request would pass a high-water mark, the
// oldest tool outputs are replaced in the conversation, in one big step down to a low-water
// mark, by a one-line stub naming the transcript record that keeps them. Big and rare steps,
// because every change of history costs the cached prefix after it. The system prompt (the
// brief), the first user message (the instructions) and the assistant turns are never touched,
// nor the newest tool outputs.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "agents/types.h"

namespace kd::agents {

// The marks set what a long session pays: every step rewrites the cache from its first stub on
// (at 1.25x the input price on Anthropic), and what stays between the marks is read each turn
// (at 0.1x). A low mark well under the high one makes steps big and rare; a high mark near the
// window makes the cached prefix that each write buys read more often. With 10-40 KB outputs in
// a 200k window, 0.80/0.45 billed 22.6% of the uncached session, 0.90/0.30 18.8%
// (bench/agents/README.md). The estimate is calibrated on the provider's count of the last
// request, and a "prompt is too long" answer still masks deeper and retries.
struct ContextPolicy {
  long window = 0;           // tokens; 0: unknown, nothing is masked
  double high_water = 0.90;  // of the window, less the output allowance: mask when above
  double low_water = 0.30;   // of the window: mask down to this
  int keep_recent = 2;       // the newest tool-result messages are never masked
};

// The one-line stub that replaces a masked output; resume writes the same one from the note.
std::string mask_stub(const std::string& tool_name, long record_seq);

class ContextWindow {
 public:
  ContextWindow(ContextPolicy p, int max_output_tokens) : p_(p), max_output_(max_output_tokens) {}

  // The provider counted `tokens` for a request of `bytes`: later estimates use that ratio.
  void calibrate(size_t bytes, long tokens);
  long estimate(size_t bytes) const;

  // Whether a request of `bytes` passes the high-water mark.
  bool over_high_water(size_t bytes) const;
  // Masks the oldest unmasked tool outputs until the request is at most `target` tokens (or
  // nothing is left to mask); returns the results it masked. Target: the low-water mark, or a
  // fraction of it after the provider said the prompt was too long.
  std::vector<const ToolResult*> mask(Conversation& conv, size_t bytes, double fraction_of_low = 1);

  const ContextPolicy& policy() const { return p_; }

 private:
  ContextPolicy p_;
  int max_output_;
  double tokens_per_byte_ = 1.0 / 3;  // until the provider has counted once: on the safe side
};

// The provider's answer that the prompt does not fit (Anthropic "prompt is too long", OpenAI
// context_length_exceeded).
bool is_context_overflow(const std::string& reason, const std::string& detail);

}  // namespace kd::agents
