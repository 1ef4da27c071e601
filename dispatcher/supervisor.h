// Supervised dispatch (`kdispatch author --supervise`): the model's text streams to the
// person's terminal, and each run, run_on_chip and commit waits for their approval. A denial
// becomes a tool error the model sees. Works over a pty: it reads lines, not raw keys.
#pragma once

#include <mutex>
#include <string>
#include <string_view>

namespace kd::dispatcher {

class Supervisor {
 public:
  // Prompts go to `out_fd`, answers come from `in_fd` (the terminal, or a pipe in tests).
  Supervisor(int in_fd, int out_fd) : in_fd_(in_fd), out_fd_(out_fd) {}

  // Asks "approve <tool>: <summary>? [y/N]"; only y or yes approves. End of input denies.
  // Serialized: parallel tool calls are asked one at a time.
  bool approve(std::string_view tool, std::string_view summary);

  // Shows model text as it streams.
  void show(std::string_view text);

 private:
  void write_all(std::string_view s);
  std::string read_line();

  int in_fd_, out_fd_;
  std::mutex mu_;
};

}  // namespace kd::dispatcher
