// The optional LLM verifier (docs/briefs.md, docs/receipts.md): a session given the verifier brief
// only, reading the receipt and the frozen snapshot, returning the four sections of the verifier's
// output contract. Its report is checked before it is accepted: the firing audit line in its
// grammar, and every decimal number it quotes found in the receipt. It never decides the verdict.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "agents/model_config.h"
#include "briefs/verifier_brief.h"
#include "contract/end_reason.h"

namespace kd::dispatcher {

struct LlmVerifierInput {
  agents::ModelConfig model;
  briefs::VerifierBrief brief;
  std::filesystem::path run_dir;   // the session lives in <run>/verifier/
  std::filesystem::path snapshot;  // read-only in its box
  std::filesystem::path receipt;   // copied into its work dir as receipt.json
  std::string receipt_rel;         // wiki-relative, for its first message
  contract::Chip chip;
};

struct LlmVerifierResult {
  std::optional<std::string> sections;  // the accepted report, rendered
  contract::EndReason end_reason;
  std::string transcript_head;
};

LlmVerifierResult run_llm_verifier(const LlmVerifierInput& input);

}  // namespace kd::dispatcher
