#include "tests/report/browser.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "common/files.h"

extern char** environ;

namespace kd::test {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

std::string find_chromium() {
  if (const char* c = std::getenv("KD_CHROMIUM")) return c;
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  for (size_t pos = 0; pos <= dirs.size();) {
    size_t colon = dirs.find(':', pos);
    if (colon == std::string::npos) colon = dirs.size();
    for (const char* name : {"chromium", "chromium-browser"}) {
      fs::path p = fs::path(dirs.substr(pos, colon - pos)) / name;
      if (::access(p.c_str(), X_OK) == 0) return p.string();
    }
    pos = colon + 1;
  }
  throw std::runtime_error(
      "no chromium on PATH: the report's browser tests need Debian's `chromium` package "
      "(apt-get install chromium; ./build.sh test installs it)");
}

std::vector<unsigned char> base64_decode(const std::string& in) {
  std::vector<unsigned char> out;
  unsigned v = 0;
  int bits = 0;
  for (char c : in) {
    int d = c >= 'A' && c <= 'Z'   ? c - 'A'
            : c >= 'a' && c <= 'z' ? c - 'a' + 26
            : c >= '0' && c <= '9' ? c - '0' + 52
            : c == '+'             ? 62
            : c == '/'             ? 63
                                   : -1;
    if (d < 0) continue;
    v = (v << 6) | unsigned(d);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<unsigned char>((v >> bits) & 0xFF));
    }
  }
  return out;
}

}  // namespace

fs::path report_artifacts_dir() {
  fs::path d = fs::path(KD_BINARY_DIR) / "test-artifacts" / "report";
  fs::create_directories(d);
  return d;
}

Browser::Browser(const fs::path& profile_dir, const fs::path& log) {
  const std::string exe = find_chromium();
  int to[2], from[2];
  if (::pipe2(to, O_CLOEXEC) != 0 || ::pipe2(from, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("pipe2: ") + std::strerror(errno));
  std::vector<std::string> args = {exe,
                                   "--headless=new",
                                   "--no-sandbox",  // tests run as root (as CI does)
                                   "--disable-gpu",
                                   "--disable-dev-shm-usage",
                                   "--remote-debugging-pipe",
                                   "--user-data-dir=" + profile_dir.string(),
                                   "--no-first-run",
                                   "--no-default-browser-check",
                                   "--disable-extensions",
                                   "--disable-background-networking",
                                   "--disable-component-update",
                                   "--disable-sync",
                                   "--disable-default-apps",
                                   "--mute-audio",
                                   "about:blank"};
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  posix_spawn_file_actions_adddup2(&fa, to[0], 3);
  posix_spawn_file_actions_adddup2(&fa, from[1], 4);
  int rc = ::posix_spawn(&pid_, exe.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(to[0]);
  ::close(from[1]);
  to_ = to[1];
  from_ = from[0];
  if (rc != 0) throw std::runtime_error("posix_spawn(" + exe + "): " + std::strerror(rc));
}

Browser::~Browser() {
  if (to_ >= 0) {
    std::string close = json{{"id", next_id_++}, {"method", "Browser.close"}}.dump();
    close.push_back('\0');
    (void)!::write(to_, close.data(), close.size());
    ::close(to_);
  }
  if (pid_ > 0) {
    for (int i = 0; i < 50; ++i) {
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        break;
      }
      ::usleep(100'000);
    }
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  if (from_ >= 0) ::close(from_);
}

json Browser::next_message(int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    size_t nul = buffer_.find('\0');
    if (nul != std::string::npos) {
      json m = json::parse(buffer_.substr(0, nul), nullptr, false);
      buffer_.erase(0, nul + 1);
      return m;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) throw std::runtime_error("chromium did not answer in time");
    pollfd p{from_, POLLIN, 0};
    int n = ::poll(&p, 1, static_cast<int>(left));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;
    char buf[65536];
    ssize_t got = ::read(from_, buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) throw std::runtime_error("chromium closed its DevTools pipe (see its log)");
    buffer_.append(buf, static_cast<size_t>(got));
  }
}

void Browser::on_event(const json& m) {
  const std::string method = m.value("method", "");
  const json& p = m.contains("params") ? m["params"] : json::object();
  if (method == "Page.loadEventFired") {
    loaded_ = true;
  } else if (method == "Runtime.consoleAPICalled" && p.value("type", "") == "error") {
    errors_.push_back("console.error: " + p.value("args", json::array()).dump());
  } else if (method == "Runtime.exceptionThrown") {
    errors_.push_back("exception: " + p.value("exceptionDetails", json::object()).dump());
  } else if (method == "Log.entryAdded" && p.contains("entry") &&
             p["entry"].value("level", "") == "error") {
    errors_.push_back("log: " + p["entry"].value("text", "") + " " + p["entry"].value("url", ""));
  } else if (method == "Network.requestWillBeSent" && p.contains("request")) {
    requests_.push_back(p["request"].value("url", ""));
  }
}

json Browser::call(const std::string& method, json params, bool in_session) {
  const int id = next_id_++;
  json msg = {{"id", id}, {"method", method}, {"params", std::move(params)}};
  if (in_session && !session_.empty()) msg["sessionId"] = session_;
  std::string text = msg.dump();
  text.push_back('\0');
  for (size_t off = 0; off < text.size();) {
    ssize_t n = ::write(to_, text.data() + off, text.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::runtime_error(std::string("write to chromium: ") + std::strerror(errno));
    off += static_cast<size_t>(n);
  }
  for (;;) {
    json m = next_message(60'000);
    if (m.contains("id") && m["id"] == id) {
      if (m.contains("error")) throw std::runtime_error(method + ": " + m["error"].dump());
      return m.value("result", json::object());
    }
    if (m.contains("method")) on_event(m);
  }
}

void Browser::open(const std::string& url, int width, int height) {
  errors_.clear();
  requests_.clear();
  loaded_ = false;
  session_.clear();
  json target = call("Target.createTarget", {{"url", "about:blank"}}, false);
  json attached =
      call("Target.attachToTarget", {{"targetId", target["targetId"]}, {"flatten", true}}, false);
  session_ = attached["sessionId"];
  for (const char* domain : {"Page.enable", "Runtime.enable", "Network.enable", "Log.enable"})
    call(domain);
  call("Emulation.setDeviceMetricsOverride",
       {{"width", width}, {"height", height}, {"deviceScaleFactor", 1}, {"mobile", width < 600}});
  call("Page.navigate", {{"url", url}});
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!loaded_) {
    if (std::chrono::steady_clock::now() > deadline)
      throw std::runtime_error("no load event for " + url);
    json m = next_message(60'000);
    if (m.contains("method")) on_event(m);
  }
}

json Browser::eval(const std::string& expression) {
  json r = call("Runtime.evaluate", {{"expression", expression}, {"returnByValue", true}});
  if (r.contains("exceptionDetails"))
    throw std::runtime_error("page threw on " + expression + ": " + r["exceptionDetails"].dump());
  return r["result"].value("value", json());
}

void Browser::screenshot(const fs::path& path) {
  json metrics = call("Page.getLayoutMetrics");
  const json& size =
      metrics.contains("cssContentSize") ? metrics["cssContentSize"] : metrics["contentSize"];
  json clip = {{"x", 0},
               {"y", 0},
               {"width", size.value("width", 1280.0)},
               {"height", std::min(size.value("height", 900.0), 12000.0)},
               {"scale", 1}};
  json shot = call("Page.captureScreenshot",
                   {{"format", "png"}, {"clip", clip}, {"captureBeyondViewport", true}});
  std::vector<unsigned char> png = base64_decode(shot.value("data", ""));
  write_file_atomic(path, std::string(png.begin(), png.end()));
}

}  // namespace kd::test
