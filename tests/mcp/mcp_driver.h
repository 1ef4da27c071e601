// A raw JSON-lines MCP client for the tests: `kdispatch mcp` as a real child process on pipes.
// Every line the server writes must be a JSON-RPC 2.0 message; anything else fails the test.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <deque>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kd::test {

class McpDriver {
 public:
  explicit McpDriver(const std::vector<std::string>& args);
  ~McpDriver();

  void send(const nlohmann::json& message);
  void send_line(const std::string& line);
  // The next message, or nullopt after `timeout` (or at end of output).
  std::optional<nlohmann::json> next(std::chrono::milliseconds timeout = std::chrono::seconds(20));
  // Sends a request and returns its response, keeping other messages for later next() calls.
  nlohmann::json request(const std::string& method,
                         nlohmann::json params = nlohmann::json::object(),
                         std::chrono::milliseconds timeout = std::chrono::seconds(20));
  // The response to `id`, from what came already or what comes within `timeout`.
  std::optional<nlohmann::json> response(const nlohmann::json& id,
                                         std::chrono::milliseconds timeout);
  nlohmann::json initialize();
  // tools/call; returns the result (content, structuredContent, isError).
  nlohmann::json call(const std::string& tool, nlohmann::json arguments,
                      std::chrono::milliseconds timeout = std::chrono::seconds(60));

  // Closes the server's input and returns its exit status.
  int finish();
  const std::vector<std::string>& non_protocol_lines() const { return junk_; }
  // The server's own CPU time so far (user + system), in clock ticks.
  long cpu_ticks() const;

 private:
  bool read_line(std::string& line, std::chrono::milliseconds timeout);
  pid_t pid_ = -1;
  int in_ = -1, out_ = -1;
  std::string buffer_;
  std::deque<nlohmann::json> pending_;
  std::vector<std::string> junk_;
  long next_id_ = 1000;
};

}  // namespace kd::test
