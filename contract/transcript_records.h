// The record types of a kdispatch transcript (docs/transcripts.md), written by the session and
// read back by resume, the audit, the demo and the report.
#pragma once

namespace kd::contract::transcript {

inline constexpr const char* kHeader = "header";           // session, model, brief identity
inline constexpr const char* kRequest = "request";         // what was sent to the provider
inline constexpr const char* kResponse = "response";       // one assistant turn
inline constexpr const char* kToolCall = "tool_call";      // a call the model made
inline constexpr const char* kToolResult = "tool_result";  // what the model was told
inline constexpr const char* kViolation = "violation";     // a refusal the sandbox recorded
inline constexpr const char* kNote = "note";               // retries, nudges, resumes
inline constexpr const char* kDecision = "decision";       // a supervising person's answer or note
inline constexpr const char* kEnd = "end";                 // the session's result

}  // namespace kd::contract::transcript
