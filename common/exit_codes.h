// Exit statuses shared by every kdispatch command (docs/architecture.md).
#pragma once

namespace kd {

inline constexpr int kExitOk = 0;
inline constexpr int kExitAdvisory = 1;   // advisory findings only
inline constexpr int kExitRefused = 2;    // refused, gate failed, violations found
inline constexpr int kExitUsage = 64;     // bad command line
inline constexpr int kExitTempFail = 75;  // the infrastructure failed (provider, chip): retry
inline constexpr int kExitInternal = 70;  // bug or environment failure

}  // namespace kd
