// Supervision through files (docs/dispatcher.md "Supervision"), for a supervising person who is
// not at a terminal: a master session through `kdispatch mcp`, or anything that can write a file.
// The author session and the supervisor share one directory:
//   pending/<call>.json    a request awaiting its answer, written atomically by the session
//   decisions/<call>.json  the answer, put in place by the supervisor with a rename
//   decided/<call>.json    the request with the answer the session took
//   errors/<call>.json     why the last answer put in place for a pending request was refused
// The session sleeps on inotify over decisions/ (nothing polls). A malformed answer is removed
// and its error written; the request stays pending for the next answer.
#pragma once

#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "dispatcher/supervisor.h"

namespace kd::dispatcher {

inline constexpr const char* kSupervisionPending = "pending";
inline constexpr const char* kSupervisionDecisions = "decisions";
inline constexpr const char* kSupervisionDecided = "decided";
inline constexpr const char* kSupervisionErrors = "errors";

// The name a call has in the channel's files: its id when that is 1 to 64 of [A-Za-z0-9_-], else
// "call-" and 16 hex digits of the id's sha256 (an id is the model's text, never a path).
std::string supervision_call_name(const std::string& call_id);

// Creates the channel's folders under `dir`.
void make_supervision_dir(const std::filesystem::path& dir);

// An answer to a request of `tool` whose command has `argv_size` words (0 for a commit):
//   {"decision": "approve" | "deny" | "approve_prefix" | "stop",
//    "reason": TEXT        deny only, and required there: the model reads it,
//    "prefix_words": N     approve_prefix only, 1 to argv_size (absent: the whole command),
//    "notes": [TEXT, ...]  for the model, with the call's result}
// Throws kd::Error naming `where` and the field.
Answer parse_supervision_answer(const nlohmann::json& doc, const std::string& tool,
                                size_t argv_size, const std::string& where);

// Puts `answer` in place for the request named `name`, never over another answer: false when
// one is already there (the request was answered and the session has not taken it yet).
bool post_supervision_answer(const std::filesystem::path& dir, const std::string& name,
                             const nlohmann::json& answer);

class FileSupervisor : public Supervisor {
 public:
  // `experiment` (<family>/vNNN) is named in each request. Creates the channel's folders.
  FileSupervisor(std::filesystem::path dir, std::string experiment);

  // The model's text of the current turn is kept for the requests it leads to.
  void show(std::string_view text) override;
  void turn(int number) override;

 protected:
  Answer ask(const ApprovalRequest& request) override;
  // Written to decided/ as well, so the supervisor sees what ran without asking.
  void approved_by_prefix(const ApprovalRequest& request,
                          const std::vector<std::string>& prefix) override;

 private:
  nlohmann::json request_json(const ApprovalRequest& r, const std::string& name);

  std::filesystem::path dir_;
  std::string experiment_;
  std::mutex mu_;  // turn_, said_, unnamed_
  int turn_ = 0;
  std::string said_;
  int unnamed_ = 0;  // requests without a call id
};

}  // namespace kd::dispatcher
