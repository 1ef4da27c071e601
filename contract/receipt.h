// Receipt validation (docs/receipts.md): the self-hash, the cmd, and the arithmetic a forger would
// have to keep consistent. The dispatcher takes verdict inputs only from a receipt that passed
// here.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kd::contract {

struct ReceiptCheck {
  bool ok = false;                    // intact and self-consistent, whatever its verdict
  std::vector<std::string> problems;  // each names the field and what is wrong

  std::string file_sha256;  // sha256 of the file's bytes
  std::string self_sha256;  // as recorded
  std::string cmd;          // parity | measure | flags | verify
  std::string verdict;      // PASS, FAIL, ...
  std::string mode;         // screen | full (verify receipts)
  std::map<std::string, bool> gates;
  std::optional<double> speedup;
  std::optional<double> p50_baseline_ms;
  std::optional<double> p50_candidate_ms;
  std::string parity_verdict;
  std::string measure_verdict;
  std::string hlo_status;
  std::optional<long long> custom_call_count;
};

// Reads and validates a receipt file. Never throws for bad content: an unreadable, truncated or
// edited file yields ok=false and problems naming why.
ReceiptCheck validate_receipt(const std::filesystem::path& path);

// The same checks on receipt text already in memory (`origin` names it in problems).
ReceiptCheck validate_receipt_text(std::string_view text, std::string_view origin);

}  // namespace kd::contract
