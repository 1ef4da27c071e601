// JSON-RPC 2.0 over stdio as MCP frames it (docs/mcp.md): one message per line, UTF-8, no
// embedded newlines, nothing but protocol on the output. The Output serializes writers, so
// replies of concurrent calls and progress notifications never interleave within a line.
#pragma once

#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace kd::mcp {

// The standard error codes, and the protocol's "unsupported protocol version".
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;
inline constexpr int kUnsupportedVersion = -32022;

// One incoming line, classified. `id` is set for requests (a string or an integer), absent for
// notifications; `error` is set when the line is not a valid JSON-RPC message, with the code
// and the id to answer with (null when none could be read).
struct Message {
  std::optional<nlohmann::json> id;
  std::string method;
  nlohmann::json params = nlohmann::json::object();
  std::optional<int> error_code;
  std::string error_message;
  bool is_response = false;  // a client's answer to us; we send no requests, so it is ignored
};

Message parse_message(const std::string& line);

// An error thrown by a method handler, answered as a JSON-RPC error.
struct RpcError {
  int code;
  std::string message;
  nlohmann::json data = nullptr;
};

class Output {
 public:
  explicit Output(int fd) : fd_(fd) {}
  // Writes `message` and a newline in one piece; a failed write (the client went away) is
  // reported once on stderr and the message dropped.
  void send(const nlohmann::json& message);
  void result(const nlohmann::json& id, nlohmann::json result);
  void error(const nlohmann::json& id, const RpcError& e);

 private:
  int fd_;
  std::mutex mu_;
  bool broken_ = false;
};

}  // namespace kd::mcp
