// A real browser for the report's tests: Debian's headless Chromium driven over the DevTools
// protocol on a pipe (--remote-debugging-pipe: JSON messages separated by NUL on fds 3 and 4),
// so no port is opened. A page is loaded, queried with JavaScript, screenshotted; every console
// error, uncaught exception and network request of the page is collected.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kd::test {

class Browser {
 public:
  // Starts chromium (KD_CHROMIUM, else `chromium` on PATH) headless with a fresh profile under
  // `profile_dir`; its output goes to `log`. Throws std::runtime_error naming the Debian
  // package when no chromium is installed.
  Browser(const std::filesystem::path& profile_dir, const std::filesystem::path& log);
  Browser(const Browser&) = delete;
  Browser& operator=(const Browser&) = delete;
  ~Browser();

  // Opens `url` in a new tab and waits for its load event (or throws after 60 s).
  void open(const std::string& url, int width = 1280, int height = 900);
  // Evaluates `expression` in the page; returns its value (returnByValue). A thrown exception
  // in the page is a std::runtime_error here.
  nlohmann::json eval(const std::string& expression);
  // A PNG of the whole page, written to `path`.
  void screenshot(const std::filesystem::path& path);

  // Since the last open(): console errors and uncaught exceptions, and every URL requested.
  const std::vector<std::string>& errors() const { return errors_; }
  const std::vector<std::string>& requests() const { return requests_; }

 private:
  nlohmann::json call(const std::string& method, nlohmann::json params = nlohmann::json::object(),
                      bool in_session = true);
  nlohmann::json next_message(int timeout_ms);
  void on_event(const nlohmann::json& m);

  pid_t pid_ = -1;
  int to_ = -1, from_ = -1;
  std::string buffer_;
  int next_id_ = 1;
  std::string session_;
  bool loaded_ = false;
  std::vector<std::string> errors_, requests_;
};

// The folder where the report tests leave their screenshots (a CI artifact):
// BUILD/test-artifacts/report.
std::filesystem::path report_artifacts_dir();

}  // namespace kd::test
