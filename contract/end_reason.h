// Why an agent session ended, as recorded in its transcript's `end` record, run.json and the
// journal: "finished", "ended_without_finish", "budget:<which>", "provider:<cause>" or
// "stopped_by_supervisor".
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kd::contract {

struct EndReason {
  enum class Kind {
    Finished,            // the model called finish and it was accepted
    EndedWithoutFinish,  // the model stopped calling tools and would not finish
    Budget,              // a budget ran out; detail: turns | tokens | cost | wall_time | tool_calls
    Provider,            // the provider failed; detail: its cause ("http_401:authentication_error")
    Stopped,             // the supervising person stopped the session (author --supervise)
  };
  Kind kind = Kind::EndedWithoutFinish;
  std::string detail;

  static EndReason finished() { return {Kind::Finished, ""}; }
  static EndReason without_finish() { return {Kind::EndedWithoutFinish, ""}; }
  static EndReason budget(std::string which) { return {Kind::Budget, std::move(which)}; }
  static EndReason provider(std::string cause) { return {Kind::Provider, std::move(cause)}; }
  static EndReason stopped() { return {Kind::Stopped, ""}; }

  bool operator==(const EndReason&) const = default;
};

std::string to_string(const EndReason& r);
// Reads a recorded reason; nullopt for anything else.
std::optional<EndReason> parse_end_reason(std::string_view s);

}  // namespace kd::contract
