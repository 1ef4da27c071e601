// Supervised dispatch (`kdispatch author --supervise`, docs/dispatcher.md "Supervision"): each
// run, run_on_chip and commit waits for the supervising person's answer: approve, deny with a
// reason the model reads, approve the command's prefix for the rest of the session, or stop the
// session; at any prompt the person may add notes the model receives with the call's result.
// Every answer becomes a `decision` record of the transcript (the host hands them to the session
// with the tool's outcome). The base class keeps the session's approved prefixes and writes the
// records; subclasses ask the person (TerminalSupervisor over a terminal or pipe, FileSupervisor
// in file_supervisor.h through files a master session answers).
#pragma once

#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace kd::dispatcher {

// What is asked about: a command (argv) or a commit (its message).
struct ApprovalRequest {
  std::string tool;  // run | run_on_chip | commit
  std::string call_id;
  std::vector<std::string> argv;  // run, run_on_chip
  std::string message;            // commit
};

// The person's answer to one request, as the person gave it.
struct Answer {
  enum class Kind { Approve, ApprovePrefix, Deny, Stop };
  Kind kind = Kind::Deny;
  std::string reason;              // Deny: what the model is told
  size_t prefix_words = 0;         // ApprovePrefix: the first N words of argv (0: all of it)
  std::vector<std::string> notes;  // added at this prompt, for the model
};

// What the host does with a request, and the transcript's records of it.
struct Decision {
  bool approved = false;
  bool stop = false;
  std::string reason;                                // a denial's, for the model
  std::vector<std::string> notes;                    // for the model, with this call's result
  nlohmann::json records = nlohmann::json::array();  // `decision` record data, in order
};

class Supervisor {
 public:
  virtual ~Supervisor() = default;

  // Approves without asking when a prefix granted earlier for the same tool starts argv;
  // otherwise asks. Serialized: parallel tool calls are asked one at a time.
  Decision decide(const ApprovalRequest& request);

  // Shows model text as it streams, and where a new turn starts.
  virtual void show(std::string_view text) = 0;
  virtual void turn(int number) = 0;

  // "the supervising person ..." lines appended to a tool result for the model.
  static std::string for_model(const Decision& d);

 protected:
  // `by` names the channel in the records: "terminal" or "file".
  explicit Supervisor(std::string by) : by_(std::move(by)) {}
  virtual Answer ask(const ApprovalRequest& request) = 0;
  // Tells the person a call was approved by an earlier prefix (nothing was asked).
  virtual void approved_by_prefix(const ApprovalRequest& request,
                                  const std::vector<std::string>& prefix) = 0;

 private:
  nlohmann::json record(const ApprovalRequest& r, const char* decision) const;

  std::string by_;
  std::mutex mu_;
  std::vector<std::pair<std::string, std::vector<std::string>>> prefixes_;  // tool, argv prefix
};

// Over a terminal (or a pipe in tests): prompts go to `out_fd`, answers come line by line from
// `in_fd`, so it works over a pty without raw keys. End of input denies every later request.
class TerminalSupervisor : public Supervisor {
 public:
  TerminalSupervisor(int in_fd, int out_fd, size_t width = 100)
      : Supervisor("terminal"), in_fd_(in_fd), out_fd_(out_fd), width_(width) {}

  void show(std::string_view text) override;
  void turn(int number) override;

 protected:
  Answer ask(const ApprovalRequest& request) override;
  void approved_by_prefix(const ApprovalRequest& request,
                          const std::vector<std::string>& prefix) override;

 private:
  void write_all(std::string_view s);
  bool read_line(std::string* line);  // false at end of input

  int in_fd_, out_fd_;
  size_t width_;
  bool closed_ = false;
  std::mutex out_mu_;
};

// The request as a person reads it at a glance: a command as shell words, wrapped at `width`
// columns with continuation lines indented, each line of a multi-line argument on its own line;
// a commit's message as it is.
std::string render_request(const ApprovalRequest& request, size_t width);
// A word as a POSIX shell would need it written, for display: control characters other than
// newline and tab appear as \xNN, so the model cannot hide text from the person.
std::string shell_word(const std::string& word);

}  // namespace kd::dispatcher
