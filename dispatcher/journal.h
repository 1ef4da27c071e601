// The campaign journal (DESIGN §10): one JSON line per state change, fsynced before the change
// is acted on, so `kdispatch run --resume` can rebuild the campaign after kill -9.
#pragma once

#include <cstdint>
#include <filesystem>
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

  const std::vector<JournalRecord>& records() const { return records_; }
  std::size_t torn_lines() const { return torn_; }
  const std::filesystem::path& path() const { return path_; }

  // Appends and fsyncs; returns the record as written.
  const JournalRecord& append(const std::string& type, const std::string& experiment,
                              nlohmann::json data);

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  std::vector<JournalRecord> records_;
  std::size_t torn_ = 0;
};

}  // namespace kd::dispatcher
