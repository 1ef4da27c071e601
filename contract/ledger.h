// The author's output contract as data kdispatch can check: the candidate commit grammar and
// the candidate ledger (author-kernel skill, output contract). Shared by the finish tool
// (agents), the verdict rules (dispatcher) and the audit rules.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kd::contract {

// `^cand[0-9]+\([a-z0-9-]+ v[0-9]{3}\): .+ — .+` on the subject (first line).
bool commit_subject_ok(std::string_view message);
// The candidate number and family/experiment a grammatical subject names ("cand2", "rms", "v001").
struct CommitSubject {
  std::string candidate;
  std::string family;
  std::string experiment;
};
bool parse_commit_subject(std::string_view message, CommitSubject* out);
// An `exp:` footer line in the message body.
bool has_exp_footer(std::string_view message);

// The fixed ledger columns, in order.
extern const std::vector<std::string> kLedgerColumns;

// One table row; every cell is trimmed of surrounding whitespace once, here, and escaped pipes
// (\|) are unescaped.
struct LedgerRow {
  std::string candidate;  // candN
  std::string klass;
  std::string sha;
  std::string parity;
  std::string p50_ms;
  std::string vs_naive;
  std::string receipt;
  std::string why;
  int line = 0;  // 1-based line in the ledger text
};

struct Ledger {
  bool has_loaded_line = false;     // the first non-empty line is `loaded: [...]`
  std::vector<std::string> loaded;  // the items inside the brackets
  std::vector<LedgerRow> rows;
  std::vector<std::string> problems;  // format problems, each naming the line
};

// Parses a ledger: the `loaded:` line first, then the fixed-column table. Never throws; every
// format problem lands in Ledger::problems.
Ledger parse_ledger(std::string_view text);

}  // namespace kd::contract
