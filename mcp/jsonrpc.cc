#include "mcp/jsonrpc.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "common/errors.h"

namespace kd::mcp {

using json = nlohmann::json;

Message parse_message(const std::string& line) {
  Message m;
  json j = json::parse(line, nullptr, false);
  if (j.is_discarded()) {
    m.error_code = kParseError;
    m.error_message = "the line is not JSON";
    m.id = nullptr;
    return m;
  }
  auto invalid = [&](const std::string& why) {
    m.error_code = kInvalidRequest;
    m.error_message = why;
    if (!m.id) m.id = nullptr;
    return m;
  };
  if (j.is_array()) return invalid("batches are not supported (removed in MCP 2025-06-18)");
  if (!j.is_object()) return invalid("a message is a JSON object");
  if (j.contains("id")) {
    const json& id = j["id"];
    if (!id.is_string() && !id.is_number_integer())
      return invalid("\"id\" must be a string or an integer");
    m.id = id;
  }
  if (j.value("jsonrpc", json()) != "2.0") return invalid("\"jsonrpc\" must be \"2.0\"");
  if (!j.contains("method")) {
    if (m.id && (j.contains("result") || j.contains("error"))) {
      m.is_response = true;
      return m;
    }
    return invalid("no \"method\"");
  }
  if (!j["method"].is_string()) return invalid("\"method\" must be a string");
  m.method = j["method"].get<std::string>();
  if (j.contains("params")) {
    if (!j["params"].is_object()) {
      m.error_code = kInvalidParams;
      m.error_message = "\"params\" must be an object";
      if (!m.id) m.id = nullptr;
      return m;
    }
    m.params = j["params"];
  }
  return m;
}

void Output::send(const json& message) {
  // dump() escapes control characters, so the line holds no raw newline; invalid UTF-8 from a
  // file is replaced rather than aborting the reply.
  std::string line = message.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  std::lock_guard lock(mu_);
  if (broken_) return;
  size_t done = 0;
  while (done < line.size()) {
    ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      std::fprintf(stderr, "kdispatch mcp: %s\n", sys_message("write", "stdout", errno).c_str());
      broken_ = true;
      return;
    }
    done += static_cast<size_t>(n);
  }
}

void Output::result(const json& id, json result) {
  send({{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}});
}

void Output::error(const json& id, const RpcError& e) {
  json err = {{"code", e.code}, {"message", e.message}};
  if (!e.data.is_null()) err["data"] = e.data;
  send({{"jsonrpc", "2.0"}, {"id", id}, {"error", err}});
}

}  // namespace kd::mcp
