// Builders for audit tests: kdispatch transcripts sealed like the real writer seals them,
// Claude Code lines, candidate ledgers, and receipts written by /usr/bin/python3's json module.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/process.h"

namespace kd::test {

class TranscriptBuilder {
 public:
  explicit TranscriptBuilder(std::string role = "author") : role_(std::move(role)) {}
  // Appends a sealed record; the header must come first.
  void add(const std::string& type, const nlohmann::json& data,
           const std::string& ts = "2026-03-02T10:00:00Z");
  void header(const std::string& worktree, const std::vector<std::string>& reference = {},
              const std::vector<std::string>& no_peek = {}, const std::string& artifact_dir = "");
  void tool_call(const std::string& name, const nlohmann::json& input,
                 const std::string& ts = "2026-03-02T10:00:00Z");
  void end(const nlohmann::json& finish = nullptr);
  const std::string& text() const { return text_; }
  std::string write(const TempDir& dir, const std::string& rel) const;  // returns the path

 private:
  std::string role_;
  std::string text_;
  std::string prev_;
  unsigned long seq_ = 0;
};

// One Claude Code assistant line carrying a single tool_use block, or a text block.
std::string claude_tool_line(const std::string& cwd, const std::string& name,
                             const nlohmann::json& input);
std::string claude_text_line(const std::string& cwd, const std::string& text);

// A candidate ledger with the fixed columns; each row is the eight cells.
std::string ledger_text(bool loaded_line, const std::vector<std::vector<std::string>>& rows);

// A receipt sealed by Python's json module, stored with indent=2. `dict` is a Python expression;
// `mutate` runs on `obj` after sealing (to forge edits).
std::string python_receipt(const std::string& path, const std::string& dict,
                           const std::string& mutate = "");
extern const char* const kPassVerifyReceipt;  // a full verify PASS, speedup 1.25

// Writes `text` to `path`, creating parent directories.
void write_text(const std::string& path, const std::string& text);

}  // namespace kd::test
