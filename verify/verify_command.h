// The external verify command (docs/receipts.md, docs/verification.md): --verify-cmd, else the
// binding's verify_command ("kgate" names the kgate template); with neither, kdispatch's
// measuring parent measures the candidate itself. Placeholders {reference} {candidate} {mode}
// {family} {bar} {claim} {artifact_dir} {receipt}.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kd::verify {

inline constexpr const char* kKgateTemplate =
    "kgate verify --baseline {reference} --candidate {candidate} --mode {mode} --family {family} "
    "--bar {bar} --author-claim-p50 {claim} --artifact-dir {artifact_dir} --receipt {receipt}";

// The external tool's template for `cmd` (--verify-cmd or the binding's): nullopt when empty
// (kdispatch measures), the kgate template for "kgate", else `cmd` itself.
std::optional<std::string> external_verify_template(const std::string& cmd);

// Splits the template into words (shell-like quoting: '...', "...", backslash) and substitutes
// placeholders inside each word, so a value with spaces or quotes stays one argument and is
// never interpreted by a shell. Throws kd::Error naming an unknown placeholder or bad quoting.
std::vector<std::string> expand_verify_command(const std::string& tmpl,
                                               const std::map<std::string, std::string>& values);

}  // namespace kd::verify
