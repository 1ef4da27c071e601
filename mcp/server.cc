#include "mcp/server.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <memory>
#include <set>
#include <thread>

#include "common/errors.h"
#include "common/fd.h"
#include "mcp/arguments.h"
#include "mcp/jsonrpc.h"
#include "mcp/runs.h"
#include "mcp/tools.h"

namespace kd::mcp {

using json = nlohmann::json;

namespace {

constexpr const char* kVersionKey = "io.modelcontextprotocol/protocolVersion";
constexpr const char* kModern = "2026-07-28";
// Legacy revisions answered through `initialize`, newest first.
const std::vector<std::string> kLegacy = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};

constexpr const char* kInstructions =
    "kdispatch runs pre-registered kernel experiments of a research wiki: an author agent in a "
    "sandbox, then a verifier on another chip, then a verdict by fixed rules. Use brief to check "
    "an experiment, dispatch to start it (it returns a run id at once), wait (up to 45 s a call) "
    "or status to follow it, then outcome and audit. cancel stops a run.";

json server_info() {
  return {{"name", "kdispatch"}, {"version", "0.1.0"}};
}

struct Call {
  json id;
  UniqueFd wake;
  std::atomic<bool> cancelled{false};
};

class Server {
 public:
  Server(int out_fd, const ServerOptions& o)
      : out_(out_fd), runs_(o.run_root, o.keys), env_{runs_, o.wiki} {}

  void handle(const std::string& line) {
    Message m = parse_message(line);
    if (m.error_code) {
      out_.error(*m.id, {*m.error_code, m.error_message});
      return;
    }
    if (m.is_response) return;
    if (!m.id) return notification(m);
    try {
      request(m);
    } catch (const RpcError& e) {
      out_.error(*m.id, e);
    } catch (const std::exception& e) {
      out_.error(*m.id, {kInternalError, e.what()});
    }
  }

  // Wakes every call in flight (a wait answers at once) and waits for their answers: the
  // client closed our input, yet may still read the output.
  void stop() {
    std::unique_lock lock(mu_);
    for (auto& [key, call] : calls_) {
      uint64_t one = 1;
      (void)!::write(call->wake.get(), &one, sizeof one);
    }
    idle_.wait(lock, [&] { return calls_.empty(); });
  }

 private:
  void notification(const Message& m) {
    if (m.method != "notifications/cancelled") return;  // initialized, roots, ...: nothing to do
    const json id = m.params.value("requestId", json());
    std::lock_guard lock(mu_);
    auto it = calls_.find(id.dump());
    if (it == calls_.end()) return;  // finished meanwhile, or never ours: ignored
    it->second->cancelled = true;
    uint64_t one = 1;
    (void)!::write(it->second->wake.get(), &one, sizeof one);
  }

  void request(const Message& m) {
    const json meta = m.params.value("_meta", json::object());
    const bool modern = meta.is_object() && meta.contains(kVersionKey);
    if (modern) {
      const json v = meta[kVersionKey];
      if (v != kModern)
        throw RpcError{kUnsupportedVersion,
                       "unsupported protocol version",
                       {{"supported", {kModern}}, {"requested", v}}};
    }
    if (m.method == "initialize") return initialize(m);
    if (m.method == "ping") return out_.result(*m.id, json::object());
    if (m.method == "server/discover") {
      json all = kLegacy;
      all.insert(all.begin(), kModern);
      return out_.result(*m.id, {{"resultType", "complete"},
                                 {"supportedVersions", all},
                                 {"capabilities", {{"tools", json::object()}}},
                                 {"_meta", {{"io.modelcontextprotocol/serverInfo", server_info()}}},
                                 {"instructions", kInstructions}});
    }
    if (!modern && !initialized_)
      throw RpcError{kInvalidRequest,
                     "not initialized: send initialize first (or name the protocol version in "
                     "params._meta[\"" +
                         std::string(kVersionKey) + "\"])"};
    if (m.method == "tools/list") {
      json list = json::array();
      for (const auto& t : tools())
        list.push_back(t.definition);
      return out_.result(*m.id, {{"tools", list}, {"resultType", "complete"}});
    }
    if (m.method == "tools/call") return call(m, meta);
    throw RpcError{kMethodNotFound, "no method " + quote(m.method)};
  }

  void initialize(const Message& m) {
    const json v = m.params.value("protocolVersion", json());
    if (!v.is_string()) throw RpcError{kInvalidParams, "initialize needs \"protocolVersion\""};
    std::string version = kLegacy.front();
    for (const auto& s : kLegacy)
      if (s == v) version = s;
    initialized_ = true;
    out_.result(*m.id, {{"protocolVersion", version},
                        {"capabilities", {{"tools", {{"listChanged", false}}}}},
                        {"serverInfo", server_info()},
                        {"instructions", kInstructions}});
  }

  void call(const Message& m, const json& meta) {
    const json name = m.params.value("name", json());
    if (!name.is_string()) throw RpcError{kInvalidParams, "tools/call needs \"name\""};
    const Tool* tool = find_tool(name);
    if (!tool) throw RpcError{kInvalidParams, "no tool " + quote(name.get<std::string>())};
    json args = m.params.value("arguments", json::object());

    auto c = std::make_shared<Call>();
    c->id = *m.id;
    c->wake.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!c->wake) throw_sys("eventfd", "call", errno);
    {
      std::lock_guard lock(mu_);
      if (!calls_.emplace(c->id.dump(), c).second)
        throw RpcError{kInvalidRequest, "id " + c->id.dump() + " is already in flight"};
    }
    json token = meta.is_object() ? meta.value("progressToken", json()) : json();
    std::thread([this, c, tool, args = std::move(args), token] {
      json result = run_tool(*tool, args, *c, token);
      std::lock_guard lock(mu_);
      // A cancelled call is never answered (the client forgot it).
      if (!c->cancelled) out_.result(c->id, std::move(result));
      calls_.erase(c->id.dump());
      if (calls_.empty()) idle_.notify_all();
    }).detach();
  }

  json run_tool(const Tool& tool, const json& args, Call& c, const json& token) {
    auto failure = [](const std::string& text) {
      return json{{"content", {{{"type", "text"}, {"text", text}}}},
                  {"isError", true},
                  {"resultType", "complete"}};
    };
    std::vector<std::string> problems = check_arguments(tool.definition["inputSchema"], args);
    if (!problems.empty()) {
      std::string text = "bad arguments to " + tool.name + ":";
      for (const auto& p : problems)
        text += "\n- " + p;
      return failure(text);
    }
    CallContext ctx;
    ctx.wake_fd = c.wake.get();
    double last = -1;
    ctx.progress = [&](double progress, double total, const std::string& message) {
      // Progress must increase; nothing after a cancel.
      if (token.is_null() || c.cancelled || progress <= last) return;
      last = progress;
      out_.send({{"jsonrpc", "2.0"},
                 {"method", "notifications/progress"},
                 {"params",
                  {{"progressToken", token},
                   {"progress", progress},
                   {"total", total},
                   {"message", message}}}});
    };
    try {
      json structured = tool.run(env_, args, ctx);
      return {{"content", {{{"type", "text"}, {"text", structured.dump(2)}}}},
              {"structuredContent", structured},
              {"resultType", "complete"}};
    } catch (const ToolFailure& e) {
      return failure(e.message);
    } catch (const std::exception& e) {
      return failure(tool.name + ": " + e.what());
    }
  }

  Output out_;
  Runs runs_;
  ToolEnv env_;
  bool initialized_ = false;
  std::mutex mu_;
  std::condition_variable idle_;
  std::map<std::string, std::shared_ptr<Call>> calls_;  // by id as JSON text
};

}  // namespace

int serve(int in_fd, int out_fd, const ServerOptions& options) {
  Server server(out_fd, options);
  std::string buffer;
  char chunk[65536];
  for (;;) {
    ssize_t n = ::read(in_fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      std::fprintf(stderr, "kdispatch mcp: %s\n", sys_message("read", "stdin", errno).c_str());
      break;
    }
    if (n == 0) break;
    buffer.append(chunk, static_cast<size_t>(n));
    for (size_t nl; (nl = buffer.find('\n')) != std::string::npos;) {
      std::string line = buffer.substr(0, nl);
      buffer.erase(0, nl + 1);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.find_first_not_of(" \t") == std::string::npos) continue;
      server.handle(line);
    }
  }
  if (buffer.find_first_not_of(" \t\r") != std::string::npos) server.handle(buffer);
  server.stop();
  return 0;
}

}  // namespace kd::mcp
