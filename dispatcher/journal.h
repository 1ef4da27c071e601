// The campaign journal (docs/dispatcher.md): one JSON line per state change, fsynced before the
// change is acted on, so `kdispatch run --resume` can rebuild the campaign after kill -9. One
// Journal object per campaign is shared by every session of a run; appends are serialized.
//
// Crash injection for the resume tests: KDISPATCH_CRASH_AFTER=<type>[:<n>] makes the process
// SIGKILL itself right after the n-th (default first) durable record of that type.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kd::dispatcher {

struct JournalRecord {
  std::uint64_t seq = 0;
  std::string ts;
  std::string type;        // dispatched, author_turn, committed, finished, verify_started, ...
  std::string experiment;  // <slug>/vNNN
  nlohmann::json data;
};

class Journal {
 public:
  // Opens or creates the journal and replays it. A torn last line (a crash mid-append) is cut
  // off the file and counted; any other malformed line is an error naming it.
  explicit Journal(std::filesystem::path path);
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;
  ~Journal();

  // Reads a journal without opening it for writing (a live run may be appending): complete
  // lines only.
  static std::vector<JournalRecord> read(const std::filesystem::path& path);

  // A copy: other sessions may be appending.
  std::vector<JournalRecord> records() const;
  std::size_t torn_lines() const { return torn_; }
  const std::filesystem::path& path() const { return path_; }

  // Appends and fsyncs; returns the record as written.
  JournalRecord append(const std::string& type, const std::string& experiment, nlohmann::json data);

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  std::vector<JournalRecord> records_;
  std::size_t torn_ = 0;
  mutable std::mutex mu_;
  std::string crash_type_;  // KDISPATCH_CRASH_AFTER
  int crash_countdown_ = 0;
};

// The journals of one process, one per campaign directory, each opened once and shared by every
// session that writes to it.
class JournalSet {
 public:
  // <campaign_dir>/journal.jsonl, opened (and replayed) on first use.
  Journal& at(const std::filesystem::path& campaign_dir);
  // Every journal opened so far.
  std::vector<Journal*> all();

 private:
  std::mutex mu_;
  std::map<std::filesystem::path, std::unique_ptr<Journal>> journals_;
};

}  // namespace kd::dispatcher
