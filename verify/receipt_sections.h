// The four sections of the verifier's output contract (kernel-verifier.md), written by kdispatch
// from the receipt alone when no LLM verifier ran: facts only, every number from the receipt.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "contract/receipt.h"

namespace kd::verify {

struct ReceiptFacts {
  const nlohmann::json* receipt = nullptr;  // the parsed receipt; null when unreadable
  const contract::ReceiptCheck* check = nullptr;
  std::string receipt_path;  // wiki-relative
  std::string chip;          // the verifier's chip id
  std::string mode;
};

std::string receipt_sections(const ReceiptFacts& facts);

}  // namespace kd::verify
