#include "dispatcher/supervisor.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>

#include "common/text.h"

namespace kd::dispatcher {
namespace {

using json = nlohmann::json;

constexpr std::string_view kIndent = "    ";
constexpr std::string_view kFold = "      ";  // a folded or continued line

constexpr std::string_view kChoices =
    "  a approve | d REASON deny | p [N] approve its first N words for the session | s stop the "
    "session | m TEXT note to the model\n";

std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> out;
  size_t pos = 0;
  for (;;) {
    size_t nl = s.find('\n', pos);
    out.push_back(s.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos));
    if (nl == std::string::npos) return out;
    pos = nl + 1;
  }
}

// Cuts lines wider than `width` into pieces on folded lines.
std::string fold(const std::vector<std::string>& lines, size_t width) {
  const size_t room = width > kFold.size() + 8 ? width - kFold.size() : 8;
  std::string out;
  for (const auto& line : lines) {
    if (line.size() <= width) {
      out += line + "\n";
      continue;
    }
    out += line.substr(0, width) + "\n";
    for (size_t at = width; at < line.size(); at += room)
      out += std::string(kFold) + line.substr(at, room) + "\n";
  }
  return out;
}

// Control characters as \xNN: nothing the model wrote may move the cursor, recolour or hide
// what the person reads before answering (a "conceal" escape would hide the next command).
std::string visible(std::string_view s, bool keep_newlines) {
  std::string out;
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && !(keep_newlines && (c == '\n' || c == '\t'))) || u == 0x7f) {
      static const char* hex = "0123456789abcdef";
      out += std::string("\\x") + hex[u >> 4] + hex[u & 15];
    } else {
      out += c;
    }
  }
  return out;
}

std::string first_word(const std::string& line, std::string* rest) {
  size_t sp = line.find(' ');
  *rest = sp == std::string::npos ? "" : std::string(trim(std::string_view(line).substr(sp + 1)));
  return lower(line.substr(0, sp));
}

}  // namespace

std::string shell_word(const std::string& word) {
  if (word.empty()) return "''";
  bool plain = true;
  for (char c : word) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) ||
          std::string_view("-_./=:,+@%").find(c) != std::string_view::npos)) {
      plain = false;
      break;
    }
  }
  if (plain) return word;
  std::string out = "'";
  for (char c : visible(word, true))
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string render_request(const ApprovalRequest& r, size_t width) {
  std::vector<std::string> lines;
  if (r.tool == "commit") {
    for (const auto& l : split_lines(r.message))
      lines.push_back(std::string(kIndent) + visible(l, false));
    return fold(lines, width);
  }
  std::string cur(kIndent);
  auto start = [&](std::string_view indent) {
    if (cur.find_first_not_of(' ') != std::string::npos) lines.push_back(cur);
    cur = std::string(indent);
  };
  for (const auto& arg : r.argv) {
    const std::string w = shell_word(arg);
    const bool at_start = cur.find_first_not_of(' ') == std::string::npos;
    if (w.find('\n') == std::string::npos) {
      if (!at_start && cur.size() + 1 + w.size() > width) start(kFold);
      cur += (cur.find_first_not_of(' ') == std::string::npos ? "" : " ") + w;
      continue;
    }
    // A multi-line argument (a script): each of its lines on a line of its own.
    std::vector<std::string> pieces = split_lines(w);
    if (!at_start) start(kFold);
    cur += pieces[0];
    for (size_t i = 1; i < pieces.size(); ++i) {
      start(kFold);
      cur += pieces[i];
    }
  }
  if (cur.find_first_not_of(' ') != std::string::npos) lines.push_back(cur);
  return fold(lines, width);
}

json Supervisor::record(const ApprovalRequest& r, const char* decision) const {
  json rec = {{"decision", decision}, {"tool", r.tool}, {"by", by_}};
  if (r.tool == "commit") {
    rec["message"] = r.message;
  } else {
    rec["command"] = r.argv;
  }
  return rec;
}

Decision Supervisor::decide(const ApprovalRequest& r) {
  std::lock_guard<std::mutex> lock(mu_);
  Decision d;
  if (!r.argv.empty()) {
    for (const auto& [tool, prefix] : prefixes_) {
      if (tool != r.tool || prefix.size() > r.argv.size() ||
          !std::equal(prefix.begin(), prefix.end(), r.argv.begin()))
        continue;
      approved_by_prefix(r, prefix);
      json rec = record(r, "approved_by_prefix");
      rec["prefix"] = prefix;
      d.records.push_back(std::move(rec));
      d.approved = true;
      return d;
    }
  }
  Answer a = ask(r);
  for (const auto& n : a.notes) {
    json rec = record(r, "note");
    rec["text"] = n;
    d.records.push_back(std::move(rec));
  }
  d.notes = a.notes;
  switch (a.kind) {
    case Answer::Kind::Approve:
      d.approved = true;
      d.records.push_back(record(r, "approved"));
      break;
    case Answer::Kind::ApprovePrefix: {
      const size_t n =
          a.prefix_words == 0 ? r.argv.size() : std::min(a.prefix_words, r.argv.size());
      std::vector<std::string> prefix(r.argv.begin(),
                                      r.argv.begin() + static_cast<std::ptrdiff_t>(n));
      json rec = record(r, "prefix_approved");
      rec["prefix"] = prefix;
      d.records.push_back(std::move(rec));
      prefixes_.emplace_back(r.tool, std::move(prefix));
      d.approved = true;
      break;
    }
    case Answer::Kind::Deny: {
      d.reason = a.reason;
      json rec = record(r, "denied");
      rec["reason"] = a.reason;
      d.records.push_back(std::move(rec));
      break;
    }
    case Answer::Kind::Stop:
      d.stop = true;
      d.records.push_back(record(r, "stopped"));
      break;
  }
  return d;
}

std::string Supervisor::for_model(const Decision& d) {
  std::string out;
  for (const auto& n : d.notes)
    out += "\n\n[note from the supervising person] " + n;
  return out;
}

void TerminalSupervisor::write_all(std::string_view s) {
  while (!s.empty()) {
    ssize_t n = ::write(out_fd_, s.data(), s.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // a closed terminal: the answer read next is the end of input
    s.remove_prefix(static_cast<size_t>(n));
  }
}

bool TerminalSupervisor::read_line(std::string* line) {
  line->clear();
  if (closed_) return false;
  char c;
  for (;;) {
    ssize_t n = ::read(in_fd_, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      closed_ = true;
      return !line->empty();
    }
    if (c == '\n') return true;
    if (c != '\r') *line += c;
  }
}

void TerminalSupervisor::show(std::string_view text) {
  std::lock_guard<std::mutex> lock(out_mu_);
  write_all(visible(text, true));
}

void TerminalSupervisor::turn(int number) {
  std::string bar = "\n----- turn " + std::to_string(number) + " ";
  bar += std::string(width_ > bar.size() ? width_ - bar.size() : 4, '-');
  std::lock_guard<std::mutex> lock(out_mu_);
  write_all(bar + "\n");
}

void TerminalSupervisor::approved_by_prefix(const ApprovalRequest& r,
                                            const std::vector<std::string>& prefix) {
  std::string words;
  for (const auto& w : prefix)
    words += (words.empty() ? "" : " ") + shell_word(w);
  std::lock_guard<std::mutex> lock(out_mu_);
  write_all("\n[kdispatch] " + r.tool + " approved by the session's prefix `" + words + "`:\n" +
            render_request(r, width_));
}

Answer TerminalSupervisor::ask(const ApprovalRequest& r) {
  std::unique_lock<std::mutex> lock(out_mu_);
  Answer a;
  auto say = [&](std::string_view s) { write_all(s); };
  say("\n[kdispatch] approve " + r.tool + (r.call_id.empty() ? "" : " (call " + r.call_id + ")") +
      ":\n" + render_request(r, width_));
  say(kChoices);
  std::string line;
  for (;;) {
    say("> ");
    if (!read_line(&line)) {
      a.kind = Answer::Kind::Deny;
      a.reason = "the supervising person's terminal closed (end of input)";
      say("\n[kdispatch] denied: end of input\n");
      return a;
    }
    std::string rest;
    const std::string word = first_word(std::string(trim(line)), &rest);
    if (word == "a" || word == "y" || word == "yes" || word == "approve") {
      a.kind = Answer::Kind::Approve;
      say("[kdispatch] approved\n");
      return a;
    }
    if (word == "d" || word == "n" || word == "no" || word == "deny") {
      while (rest.empty()) {
        say("reason (the model reads it): ");
        if (!read_line(&rest)) {
          rest = "no reason given (the supervising person's terminal closed)";
          break;
        }
        rest = std::string(trim(rest));
      }
      a.kind = Answer::Kind::Deny;
      a.reason = rest;
      say("[kdispatch] denied: " + rest + "\n");
      return a;
    }
    if (word == "p" || word == "prefix") {
      if (r.argv.empty()) {
        say("[kdispatch] a prefix approves commands; answer a, d, s or m for a commit\n");
        continue;
      }
      size_t n = r.argv.size();
      if (!rest.empty()) {
        char* end = nullptr;
        long v = std::strtol(rest.c_str(), &end, 10);
        if (*end != '\0' || v < 1 || static_cast<size_t>(v) > r.argv.size()) {
          say("[kdispatch] p takes a number of words from 1 to " + std::to_string(r.argv.size()) +
              "\n");
          continue;
        }
        n = static_cast<size_t>(v);
      }
      a.kind = Answer::Kind::ApprovePrefix;
      a.prefix_words = n;
      std::string words;
      for (size_t i = 0; i < n; ++i)
        words += (i ? " " : "") + shell_word(r.argv[i]);
      say("[kdispatch] approved; " + r.tool + " calls starting with `" + words +
          "` are approved for the rest of the session\n");
      return a;
    }
    if (word == "s" || word == "stop") {
      a.kind = Answer::Kind::Stop;
      say("[kdispatch] stopping the session\n");
      return a;
    }
    if (word == "m" || word == "note") {
      if (rest.empty()) {
        say("[kdispatch] m needs the note's text\n");
        continue;
      }
      a.notes.push_back(rest);
      say("[kdispatch] note kept for the model (it comes with this call's result)\n");
      continue;
    }
    say(kChoices);
  }
}

}  // namespace kd::dispatcher
