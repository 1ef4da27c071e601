#include "dispatcher/journal.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <ctime>

#include "common/errors.h"
#include "common/files.h"
#include "common/time.h"

namespace kd::dispatcher {
namespace {

// Parses the journal's complete lines; returns the length of the good prefix. A torn last line
// (a crash mid-append, never acted on) is counted in `torn`.
size_t parse_records(const std::string& text, const std::filesystem::path& path,
                     std::vector<JournalRecord>& records, size_t& torn) {
  size_t good_end = 0;
  size_t line_no = 0;
  for (size_t pos = 0; pos < text.size();) {
    size_t nl = text.find('\n', pos);
    ++line_no;
    if (nl == std::string::npos) {  // a torn last append: never acted on, so drop it
      ++torn;
      break;
    }
    auto j = nlohmann::json::parse(text.begin() + static_cast<long>(pos),
                                   text.begin() + static_cast<long>(nl), nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("seq") || !j.contains("type")) {
      throw Error("journal " + quote(path.string()) + " line " + std::to_string(line_no) +
                  " is not a journal record");
    }
    JournalRecord r{j.value("seq", std::uint64_t{0}), j.value("ts", ""), j.value("type", ""),
                    j.value("experiment", ""), j.value("data", nlohmann::json::object())};
    if (r.seq != records.size()) {
      throw Error("journal " + quote(path.string()) + " line " + std::to_string(line_no) +
                  " has seq " + std::to_string(r.seq) + " where " + std::to_string(records.size()) +
                  " was expected");
    }
    records.push_back(std::move(r));
    pos = nl + 1;
    good_end = pos;
  }
  return good_end;
}

}  // namespace

std::vector<JournalRecord> Journal::read(const std::filesystem::path& path) {
  std::vector<JournalRecord> records;
  size_t torn = 0;
  parse_records(read_file(path), path, records, torn);
  return records;
}

Journal::Journal(std::filesystem::path path) : path_(std::move(path)) {
  if (const char* crash = std::getenv("KDISPATCH_CRASH_AFTER")) {
    std::string spec = crash;
    size_t colon = spec.find(':');
    crash_type_ = spec.substr(0, colon);
    crash_countdown_ = colon == std::string::npos ? 1 : std::atoi(spec.c_str() + colon + 1);
  }
  std::string text;
  if (std::filesystem::exists(path_)) text = read_file(path_);
  size_t good_end = parse_records(text, path_, records_, torn_);
  std::filesystem::create_directories(path_.parent_path().empty() ? "." : path_.parent_path());
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) throw_sys("open", quote(path_.string()), errno);
  if (torn_ && ::ftruncate(fd_, static_cast<off_t>(good_end)) != 0) {
    throw_sys("ftruncate", quote(path_.string()), errno);
  }
}

Journal::~Journal() {
  if (fd_ >= 0) ::close(fd_);
}

std::vector<JournalRecord> Journal::records() const {
  std::lock_guard lock(mu_);
  return records_;
}

JournalRecord Journal::append(const std::string& type, const std::string& experiment,
                              nlohmann::json data) {
  std::lock_guard lock(mu_);
  JournalRecord r{records_.size(), utc_now_rfc3339(), type, experiment, std::move(data)};
  nlohmann::json j = {{"seq", r.seq},
                      {"ts", r.ts},
                      {"type", r.type},
                      {"experiment", r.experiment},
                      {"data", r.data}};
  std::string line = j.dump() + "\n";
  const char* p = line.data();
  size_t left = line.size();
  while (left > 0) {
    ssize_t n = ::write(fd_, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_sys("write", quote(path_.string()), errno);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (::fdatasync(fd_) != 0) throw_sys("fdatasync", quote(path_.string()), errno);
  records_.push_back(r);
  if (type == crash_type_ && --crash_countdown_ == 0) ::kill(::getpid(), SIGKILL);
  return r;
}

Journal& JournalSet::at(const std::filesystem::path& campaign_dir) {
  std::lock_guard lock(mu_);
  auto& slot = journals_[campaign_dir.lexically_normal()];
  if (!slot) slot = std::make_unique<Journal>(campaign_dir / "journal.jsonl");
  return *slot;
}

std::vector<Journal*> JournalSet::all() {
  std::lock_guard lock(mu_);
  std::vector<Journal*> out;
  for (auto& [dir, j] : journals_)
    out.push_back(j.get());
  return out;
}

}  // namespace kd::dispatcher
