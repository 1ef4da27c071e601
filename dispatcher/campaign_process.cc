#include "dispatcher/campaign_process.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

#include "common/files.h"
#include "common/time.h"

namespace kd::dispatcher {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

// The kernel's start time of `pid` (field 22 of /proc/PID/stat), so a pid reused by another
// process is not taken for the campaign. Empty when the process is gone.
std::string start_ticks(long pid) {
  std::string stat;
  try {
    stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  } catch (const std::exception&) {
    return "";
  }
  size_t p = stat.rfind(')');  // the command name may hold spaces
  if (p == std::string::npos) return "";
  // `start` is the space before field `field + 1`; field 3 (the state) follows the ')'.
  int field = 2;
  size_t start = p + 1;
  while (field < 21 && start < stat.size()) {
    start = stat.find(' ', start + 1);
    if (start == std::string::npos) return "";
    ++field;
  }
  size_t end = stat.find(' ', start + 1);
  return stat.substr(start + 1, end == std::string::npos ? std::string::npos : end - start - 1);
}

}  // namespace

CampaignProcess::CampaignProcess(fs::path run_root, json info, double beat_s)
    : path_(std::move(run_root) / kCampaignProcessFile), record_(std::move(info)), beat_s_(beat_s) {
  record_["pid"] = static_cast<long>(::getpid());
  record_["start_ticks"] = start_ticks(::getpid());
  record_["host"] = host_name();
  record_["started"] = utc_now_rfc3339();
  record_["heartbeat_every_s"] = beat_s_;
  record_["ended"] = nullptr;
  write();
  beater_ = std::thread([this] {
    std::unique_lock lock(mu_);
    while (!cv_.wait_for(lock, std::chrono::duration<double>(beat_s_), [this] { return ended_; })) {
      try {
        write();
      } catch (const std::exception&) {
        // A full disk must not end the campaign; status then reports a stale heartbeat.
      }
    }
  });
}

CampaignProcess::~CampaignProcess() {
  try {
    end("stopped");
  } catch (const std::exception&) {
  }
}

void CampaignProcess::end(const std::string& summary) {
  {
    std::lock_guard lock(mu_);
    if (ended_) return;
    ended_ = true;
    record_["ended"] = utc_now_rfc3339();
    record_["summary"] = summary;
  }
  cv_.notify_all();
  if (beater_.joinable()) beater_.join();
  write();
}

void CampaignProcess::write() {
  record_["heartbeat"] = utc_now_rfc3339();
  write_file_atomic(path_, record_.dump(2) + "\n");
}

const char* to_string(Liveness::State s) {
  switch (s) {
    case Liveness::State::Alive:
      return "alive";
    case Liveness::State::Dead:
      return "dead";
    case Liveness::State::Ended:
      return "ended";
    case Liveness::State::Unknown:
      return "unknown";
  }
  return "unknown";
}

Liveness campaign_liveness(const fs::path& run_root, double now) {
  Liveness l;
  const fs::path path = run_root / kCampaignProcessFile;
  if (!fs::is_regular_file(path)) {
    l.why = "no " + std::string(kCampaignProcessFile);
    return l;
  }
  l.record = json::parse(read_file(path), nullptr, false);
  if (!l.record.is_object()) {
    l.record = nullptr;
    l.why = std::string(kCampaignProcessFile) + " is not a JSON object";
    return l;
  }
  if (l.record.value("ended", json()).is_string()) {
    l.state = Liveness::State::Ended;
    l.why = "ended " + l.record["ended"].get<std::string>();
    return l;
  }
  const long pid = l.record.value("pid", 0L);
  if (l.record.value("host", "") == host_name() && pid > 0) {
    const std::string ticks = start_ticks(pid);
    if (ticks.empty() || ticks != l.record.value("start_ticks", ticks)) {
      l.state = Liveness::State::Dead;
      l.why = "pid " + std::to_string(pid) + " is gone";
      return l;
    }
  }
  const double beat = parse_rfc3339(l.record.value("heartbeat", "")).value_or(0);
  const double every = l.record.value("heartbeat_every_s", 15.0);
  const double silent = now - beat;
  if (silent > std::max(60.0, 4 * every)) {
    l.state = Liveness::State::Dead;
    l.why = "no heartbeat for " + std::to_string(static_cast<long>(silent)) + " s";
    return l;
  }
  l.state = Liveness::State::Alive;
  l.why = "pid " + std::to_string(pid) + " on " + l.record.value("host", "?");
  return l;
}

}  // namespace kd::dispatcher
