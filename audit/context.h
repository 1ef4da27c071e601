// What the audit rules check against (docs/audit.md): filled from command-line flags, from a
// kdispatch transcript's header, or from a foreign transcript's recorded working directory.
// An empty field means "not known": the rules that need it report "not checked" with what is
// missing.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kd::audit {

struct AuditContext {
  std::string worktree;  // absolute; writes must stay under it
  std::string wiki;      // absolute; no write beneath it is scratch (allowed roots)
  std::vector<std::string> never_scratch;  // absolute; the runs' root, the home repository
  std::vector<std::string> writable;       // the author's own writable dirs (its artifact dir)
  std::vector<std::string> references;  // reference modules (absolute, or relative to the worktree)
  std::vector<std::string> no_peek;     // globs (`**` any depth)
  std::vector<std::string> plan;        // candidate ids of the stub's plan (cand1, cand2, ...)
  std::optional<double> bar;            // the pre-registered minimum speedup
  std::string stub_committed;           // RFC 3339 time the stub was committed
  std::string repository;               // git repository holding the candidate branch
  std::string branch;                   // the candidate branch (default: the repository's HEAD)
  std::vector<std::string> receipt_dirs;  // where relative receipt paths resolve (the worktree too)
};

// True when `path` is `dir` or lies under it (both absolute and normalized).
bool path_within(std::string_view path, std::string_view dir);

}  // namespace kd::audit
