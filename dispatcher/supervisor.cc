#include "dispatcher/supervisor.h"

#include <unistd.h>

#include <cctype>
#include <cerrno>

namespace kd::dispatcher {

void Supervisor::write_all(std::string_view s) {
  while (!s.empty()) {
    ssize_t n = ::write(out_fd_, s.data(), s.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // a closed terminal: the answer read next will deny
    s.remove_prefix(static_cast<size_t>(n));
  }
}

std::string Supervisor::read_line() {
  std::string line;
  char c;
  for (;;) {
    ssize_t n = ::read(in_fd_, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || c == '\n') return line;
    if (c != '\r') line += c;
  }
}

bool Supervisor::approve(std::string_view tool, std::string_view summary) {
  std::lock_guard<std::mutex> lock(mu_);
  write_all("\n[kdispatch] approve ");
  write_all(tool);
  write_all(": ");
  write_all(summary);
  write_all("? [y/N] ");
  std::string answer = read_line();
  for (auto& ch : answer)
    ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  while (!answer.empty() && answer.back() == ' ')
    answer.pop_back();
  bool ok = answer == "y" || answer == "yes";
  write_all(ok ? "[kdispatch] approved\n" : "[kdispatch] denied\n");
  return ok;
}

void Supervisor::show(std::string_view text) {
  std::lock_guard<std::mutex> lock(mu_);
  write_all(text);
}

}  // namespace kd::dispatcher
