// The record a running campaign keeps of itself (<run-root>/campaign-process.json): its pid, host,
// command line, model, budgets and version, and a heartbeat rewritten while it runs, so that
// `kdispatch status` tells a live campaign from one that died (kill -9, a crash, a reboot)
// without trusting a clock that only grows.
#pragma once

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "contract/journal_records.h"

namespace kd::dispatcher {

using contract::journal::kCampaignProcessFile;

// Writes the record at construction and its heartbeat every `beat_s` seconds from a thread of
// its own; `end` (or the destructor) marks the campaign ended with its summary.
class CampaignProcess {
 public:
  CampaignProcess(std::filesystem::path run_root, nlohmann::json info, double beat_s);
  CampaignProcess(const CampaignProcess&) = delete;
  CampaignProcess& operator=(const CampaignProcess&) = delete;
  ~CampaignProcess();
  void end(const std::string& summary);

 private:
  void write();
  std::filesystem::path path_;
  nlohmann::json record_;
  double beat_s_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool ended_ = false;
  std::thread beater_;
};

struct Liveness {
  enum class State { Alive, Dead, Ended, Unknown } state = State::Unknown;
  std::string why;        // "pid 123 is gone", "no heartbeat for 300 s", ...
  nlohmann::json record;  // the process record, or null
};

// "alive", "dead", "ended", "unknown".
const char* to_string(Liveness::State s);

// Whether the campaign that writes under `run_root` is alive, as of `now` (Unix seconds).
Liveness campaign_liveness(const std::filesystem::path& run_root, double now);

}  // namespace kd::dispatcher
