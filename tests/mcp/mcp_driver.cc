#include "tests/mcp/mcp_driver.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace kd::test {

using json = nlohmann::json;
using clock_type = std::chrono::steady_clock;

McpDriver::McpDriver(const std::vector<std::string>& args) {
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("pipe2: ") + std::strerror(errno));
  std::vector<std::string> argv = {KD_BINARY, "mcp"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargv;
  for (auto& a : argv)
    cargv.push_back(a.data());
  cargv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  int rc = ::posix_spawn(&pid_, cargv[0], &fa, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(in[0]);
  ::close(out[1]);
  if (rc != 0) throw std::runtime_error(std::string("posix_spawn: ") + std::strerror(rc));
  in_ = in[1];
  out_ = out[0];
}

McpDriver::~McpDriver() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  if (in_ >= 0) ::close(in_);
  if (out_ >= 0) ::close(out_);
}

void McpDriver::send_line(const std::string& line) {
  std::string l = line + "\n";
  if (::write(in_, l.data(), l.size()) != static_cast<ssize_t>(l.size()))
    throw std::runtime_error("write to the server failed");
}

void McpDriver::send(const json& message) {
  send_line(message.dump());
}

bool McpDriver::read_line(std::string& line, std::chrono::milliseconds timeout) {
  const auto deadline = clock_type::now() + timeout;
  for (;;) {
    size_t nl = buffer_.find('\n');
    if (nl != std::string::npos) {
      line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return true;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_type::now());
    if (left.count() <= 0) return false;
    pollfd p{out_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char buf[65536];
    ssize_t n = ::read(out_, buf, sizeof buf);
    if (n <= 0) return false;
    buffer_.append(buf, static_cast<size_t>(n));
  }
}

std::optional<json> McpDriver::next(std::chrono::milliseconds timeout) {
  if (!pending_.empty()) {
    json j = pending_.front();
    pending_.pop_front();
    return j;
  }
  std::string line;
  while (read_line(line, timeout)) {
    json j = json::parse(line, nullptr, false);
    if (j.is_object() && j.value("jsonrpc", "") == "2.0") return j;
    junk_.push_back(line);
  }
  return std::nullopt;
}

std::optional<json> McpDriver::response(const json& id, std::chrono::milliseconds timeout) {
  for (auto it = pending_.begin(); it != pending_.end(); ++it) {
    if (it->contains("id") && (*it)["id"] == id && !it->contains("method")) {
      json j = *it;
      pending_.erase(it);
      return j;
    }
  }
  const auto deadline = clock_type::now() + timeout;
  std::string line;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_type::now());
    if (left.count() <= 0 || !read_line(line, left)) return std::nullopt;
    json j = json::parse(line, nullptr, false);
    if (!j.is_object() || j.value("jsonrpc", "") != "2.0") {
      junk_.push_back(line);
      continue;
    }
    if (j.contains("id") && j["id"] == id && !j.contains("method")) return j;
    pending_.push_back(j);
  }
}

json McpDriver::request(const std::string& method, json params, std::chrono::milliseconds timeout) {
  json id = next_id_++;
  send({{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}});
  auto r = response(id, timeout);
  if (!r) throw std::runtime_error("no response to " + method);
  return *r;
}

json McpDriver::initialize() {
  json r = request("initialize", {{"protocolVersion", "2025-06-18"},
                                  {"capabilities", json::object()},
                                  {"clientInfo", {{"name", "mcp-driver"}, {"version", "1"}}}});
  send({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}});
  return r;
}

json McpDriver::call(const std::string& tool, json arguments, std::chrono::milliseconds timeout) {
  json r = request("tools/call", {{"name", tool}, {"arguments", std::move(arguments)}}, timeout);
  if (!r.contains("result")) throw std::runtime_error("tools/call " + tool + ": " + r.dump());
  return r["result"];
}

long McpDriver::cpu_ticks() const {
  std::ifstream in("/proc/" + std::to_string(pid_) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Fields after the command name, which is in parentheses and may hold spaces.
  std::istringstream rest(stat.substr(stat.rfind(')') + 2));
  std::string field;
  long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::stol(field);
    if (i == 15) stime = std::stol(field);
  }
  return utime + stime;
}

int McpDriver::finish() {
  ::close(in_);
  in_ = -1;
  std::string line;
  while (read_line(line, std::chrono::seconds(20))) {
    json j = json::parse(line, nullptr, false);
    if (j.is_object() && j.value("jsonrpc", "") == "2.0")
      pending_.push_back(j);
    else
      junk_.push_back(line);
  }
  int st = 0;
  ::waitpid(pid_, &st, 0);
  pid_ = -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

}  // namespace kd::test
