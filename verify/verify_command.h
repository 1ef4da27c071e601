// The verify command (docs/receipts.md, docs/architecture.md): --verify-cmd, else the binding's
// verify_command, else the kgate template; placeholders {reference} {candidate} {mode} {family}
// {bar} {claim} {artifact_dir} {receipt}.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace kd::verify {

inline constexpr const char* kKgateTemplate =
    "kgate verify --baseline {reference} --candidate {candidate} --mode {mode} --family {family} "
    "--bar {bar} --author-claim-p50 {claim} --artifact-dir {artifact_dir} --receipt {receipt}";

// Splits the template into words (shell-like quoting: '...', "...", backslash) and substitutes
// placeholders inside each word, so a value with spaces or quotes stays one argument and is
// never interpreted by a shell. Throws kd::Error naming an unknown placeholder or bad quoting.
std::vector<std::string> expand_verify_command(const std::string& tmpl,
                                               const std::map<std::string, std::string>& values);

}  // namespace kd::verify
