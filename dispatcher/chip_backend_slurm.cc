// The Slurm backend (docs/slurm.md): each piece of chip work is a job asking the partition for
// a chip by GRES. The job file and its result live in the run directory on storage every node
// sees; one Watcher polls Slurm for every job in flight; a job that ends without a result is an
// error carrying Slurm's state and reason.
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <random>
#include <set>

#include "common/errors.h"
#include "common/files.h"
#include "common/json_read.h"
#include "common/policy_path.h"
#include "common/time.h"
#include "contract/journal_records.h"
#include "dispatcher/chip_backend.h"
#include "dispatcher/chip_job.h"
#include "dispatcher/experiment_error.h"
#include "dispatcher/slurm_client.h"

namespace kd::dispatcher {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;
namespace rec = contract::journal;

std::string random_token() {
  std::random_device rd;
  std::string out;
  for (int i = 0; i < 4; ++i) {
    char buf[9];
    std::snprintf(buf, sizeof buf, "%08x", rd());
    out += buf;
  }
  return out;
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The last `n` bytes of a job's output, read from the end: the whole file is never loaded.
std::string tail_of(const fs::path& p, size_t n) {
  std::ifstream in(p, std::ios::binary | std::ios::ate);
  if (!in) return "";
  const std::streamoff size = in.tellg();
  if (size < 0) return "";  // not a file that can be read from its end
  const std::streamoff from = size > std::streamoff(n) ? size - std::streamoff(n) : 0;
  std::string text(static_cast<size_t>(size - from), '\0');
  in.seekg(from);
  in.read(text.data(), std::streamsize(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  return from > 0 ? "..." + text : text;
}

class SlurmChips : public ChipBackend {
 public:
  explicit SlurmChips(const contract::ChipInventory& inv)
      : s_(*inv.slurm),
        client_(slurm::ClientOptions{s_.env, std::chrono::milliseconds(10000)}),
        watcher_(client_, std::chrono::milliseconds(static_cast<long>(s_.poll_interval_s * 1000))),
        kdispatch_(s_.kdispatch.empty() ? executable_path().parent_path() / "kdispatch-full"
                                        : s_.kdispatch) {}

  verify::ChipRun run(const ChipTask& t,
                      const std::function<void(const std::string&)>& on_start) override {
    // Slurm cannot exclude one GRES index. Where a node has two chips or more, a verification
    // asks for one; given the author's last, the node declines it and keeps it (Held) while
    // the next one-chip try waits for another, so that try needs one free chip, as locally.
    // Only a third try, should the second be declined too (the first's hold ended), asks for
    // two chips, and the node uses the one that is not the author's.
    Held held(*this);
    for (const json& j : t.declined)
      held.add(j);
    auto tried = [&](Try got) {
      if (!got.run) held.add(got.submitted);
      return got.run;
    };
    if (!t.in_flight.empty()) {
      // An earlier process's job for this very work: awaited if it still runs, collected if it
      // ended; never submitted twice. There is one at most: a declined try is journalled
      // before the next one is submitted.
      if (auto run = tried(finish(t, t.in_flight.front(), on_start))) return *run;
    }
    const bool avoid = !t.avoid_chip.empty() && chips_per_node() >= 2;
    for (;;) {
      const int chips = avoid && held.declined() >= 2 ? 2 : 1;
      if (auto run = tried(submit(t, chips, avoid && chips == 1, held.files(), on_start)))
        return *run;
    }
  }

  void settle(const std::vector<json>& in_flight) override {
    // A try that may decline has done all it reads once its result is there, and one that
    // declined holds its chip until the next try, which is yet to come.
    for (const json& j : in_flight)
      await(j, j.value("decline_avoided", false));
  }

  int parallel() override {
    if (s_.parallel > 0) return s_.parallel;
    const slurm::Client::Partition p = partition();
    return std::max(1, p.nodes * gres_count(p));
  }

  void cancel_all() override {
    std::vector<std::string> ids;
    {
      std::lock_guard lock(mu_);
      ids.assign(in_flight_.begin(), in_flight_.end());
    }
    if (!ids.empty()) client_.cancel(ids);
  }

  bool is_slurm() const override { return true; }

 private:
  // A submitted job's outcome: its run, or nullopt when the node declined it.
  struct Try {
    std::optional<verify::ChipRun> run;
    json submitted;  // its job_submitted data
  };

  // The declined tries of one piece of work: how many, and the files that give back the chips
  // those still running hold. Each file is created on every way out, in case the next try
  // never started (a failure, a stop); its job ends within the node's 50 ms look.
  class Held {
   public:
    explicit Held(SlurmChips& chips) : chips_(chips) {}
    Held(const Held&) = delete;
    Held& operator=(const Held&) = delete;
    ~Held() {
      for (const auto& [id, file] : files_) {
        try {
          write_file_atomic(file, "");
        } catch (const Error&) {
          // The job gives its chip back at its bound (kHoldAtMost).
        }
        std::lock_guard lock(chips_.mu_);
        chips_.in_flight_.erase(id);
      }
    }
    void add(const json& submitted) {
      ++declined_;
      if (const std::string hold = submitted.value("hold", ""); !hold.empty())
        files_.emplace_back(submitted.value("job_id", ""), hold);
    }
    int declined() const { return declined_; }
    std::vector<fs::path> files() const {
      std::vector<fs::path> out;
      for (const auto& f : files_)
        out.push_back(f.second);
      return out;
    }

   private:
    SlurmChips& chips_;
    int declined_ = 0;
    std::vector<std::pair<std::string, fs::path>> files_;
  };

  // How long a declined try keeps its chip at most when no next try comes to take it over (the
  // dispatcher stopped and was not resumed); a resumed one gives it back at once.
  static constexpr double kHoldAtMost = 600;

  // Submits the task as a job asking for `chips` chips and finishes it. With `decline_avoided`
  // the node declines the author's chip and holds it; the job names the hold files of earlier
  // declined tries (`releases`), which it creates once it has its own chip.
  Try submit(const ChipTask& t, int chips, bool decline_avoided,
             const std::vector<fs::path>& releases,
             const std::function<void(const std::string&)>& on_start) {
    const fs::path dir = job_dir(t);
    ChipJobFile f;
    f.experiment = t.experiment;
    f.purpose = t.purpose;
    f.job = t.job;
    f.chip_env = s_.chip_env;
    f.chip_kind = s_.kind;
    f.devices = s_.devices;
    f.avoid_chip = t.avoid_chip;
    f.decline_avoided = decline_avoided;
    if (decline_avoided) {
      f.hold_file = dir / "release";
      f.hold_at_most_s = kHoldAtMost;
    }
    f.releases = releases;
    f.result = dir / "result.json";
    if (first_job_of(t.run_dir)) {
      f.marker = dir.parent_path() / ".shared-storage-marker";
      f.marker_token = random_token();
      write_file_atomic(*f.marker, f.marker_token + "\n");
    }
    write_file_atomic(dir / "job.json", chip_job_json(f).dump(2) + "\n");
    const fs::path script = dir / "job.sh";
    write_file_atomic(script, "#!/bin/sh\nexec " + shell_quote(kdispatch_.string()) + " chip-job " +
                                  shell_quote((dir / "job.json").string()) + "\n");
    if (::chmod(script.c_str(), 0755) != 0) throw_sys("chmod", quote(script.string()), errno);

    slurm::SubmitRequest q;
    q.name = "kd-" + t.purpose + "-" + t.experiment;
    std::replace(q.name.begin(), q.name.end(), '/', '-');
    q.partition = s_.partition;
    q.gres = s_.gres_name + ":" + std::to_string(chips);
    q.script = script;
    q.output = dir / "job.out";
    q.chdir = dir;
    q.time_limit_minutes = s_.time_limit_minutes;
    q.extra_args = s_.sbatch_args;
    const std::string id = client_.submit(q);
    json submitted = {{"job_id", id},
                      {"purpose", t.purpose},
                      {"dir", dir.string()},
                      {"result", f.result.string()},
                      {"gres", q.gres},
                      {"avoid_chip", t.avoid_chip},
                      {"partition", s_.partition}};
    if (decline_avoided) {
      submitted["decline_avoided"] = true;
      submitted["hold"] = f.hold_file.string();
    }
    if (!releases.empty()) submitted["releases"] = releases;
    if (!t.call_id.empty()) {
      submitted["call_id"] = t.call_id;
      submitted["argv"] = t.job.request.argv;
    }
    if (t.record) t.record(rec::kJobSubmitted, submitted);
    {
      std::lock_guard lock(mu_);
      in_flight_.insert(id);
    }
    return finish(t, submitted, on_start);
  }

  fs::path job_dir(const ChipTask& t) {
    static std::atomic<unsigned> seq{0};
    std::string stamp = utc_now_rfc3339();
    stamp.erase(
        std::remove_if(stamp.begin(), stamp.end(), [](char c) { return c == ':' || c == '-'; }),
        stamp.end());
    const fs::path dir = t.run_dir / s_.job_dir /
                         (t.purpose + "-" + stamp + "-" + std::to_string(getpid()) + "-" +
                          std::to_string(seq.fetch_add(1)));
    fs::create_directories(dir);
    return dir;
  }

  bool first_job_of(const fs::path& run_dir) {
    std::lock_guard lock(mu_);
    return checked_.insert(run_dir).second;
  }

  slurm::Client::Partition partition() {
    std::lock_guard lock(mu_);
    if (!partition_) partition_ = client_.partition(s_.partition);
    return *partition_;
  }

  // The partition's chips of the inventory's GRES on one node.
  int gres_count(const slurm::Client::Partition& p) const {
    if (auto it = p.gres_per_node.find(s_.gres_name); it != p.gres_per_node.end())
      return it->second;
    const std::string name = s_.gres_name.substr(0, s_.gres_name.find(':'));
    if (auto it = p.gres_per_node.find(name); it != p.gres_per_node.end()) return it->second;
    return 1;
  }

  int chips_per_node() {
    try {
      return gres_count(partition());
    } catch (const Error&) {
      return 1;  // asking for one chip is always possible
    }
  }

  // A journalled job ({"job_id", "result", ...}) until Slurm says it ended; its result file,
  // written last on the node, brings the Watcher's next poll forward. With `until_result` the
  // wait also ends once that file is there, the job maybe still running.
  slurm::JobStatus await(const json& job, bool until_result = false) {
    const std::string id = job.value("job_id", "");
    std::optional<slurm::JobStatus> st =
        watcher_.wait(id, std::nullopt, fs::path(job.value("result", "")), until_result);
    if (!st)
      throw ExperimentError(contract::ErrorCause::ChipUnavailable,
                            "stopped waiting for Slurm job " + id + " (it is left to Slurm)");
    return *st;
  }

  // A journalled job to its end. A try that may decline is looked at as soon as its result is
  // there: declined, it keeps its chip (until its hold file appears) and is journalled at once;
  // otherwise it is awaited to its end.
  Try finish(const ChipTask& t, const json& submitted,
             const std::function<void(const std::string&)>& on_start) {
    const bool may_decline = submitted.value("decline_avoided", false);
    slurm::JobStatus st = await(submitted, may_decline);
    const fs::path result = submitted.value("result", "");
    std::optional<ChipJobResult> r;
    std::string unreadable;
    if (fs::exists(result)) {
      try {
        r = chip_job_result_from_json(parse_json_document(read_file(result), result.string()),
                                      result.string());
      } catch (const Error& e) {
        unreadable = e.what();
      }
    }
    const bool holding = !slurm::is_final(st.phase) && r && r->declined && r->error.empty();
    if (!holding && !slurm::is_final(st.phase)) st = await(submitted);
    return Try{collect(t, submitted, st, r, unreadable, holding, on_start), submitted};
  }

  // The job's run, or nullopt when the node declined it as it was asked to. A declined try
  // still `holding` its chip stays among the jobs a second signal cancels until it is let go.
  std::optional<verify::ChipRun> collect(const ChipTask& t, const json& submitted,
                                         const slurm::JobStatus& st,
                                         std::optional<ChipJobResult>& r,
                                         const std::string& unreadable, bool holding,
                                         const std::function<void(const std::string&)>& on_start) {
    const std::string id = submitted.value("job_id", "");
    if (!holding) {
      std::lock_guard lock(mu_);
      in_flight_.erase(id);
    }
    const fs::path dir = submitted.value("dir", "");
    json finished = {{"job_id", id}, {"purpose", t.purpose}, {"node", st.node}};
    if (holding) {
      finished["holding"] = true;  // Slurm's end comes once the next try has its chip
    } else {
      finished.update({{"state", st.state}, {"reason", st.reason}, {"exit_code", st.exit_code}});
    }
    if (r) {
      if (!r->declined) finished["chip"] = r->chip;
      finished["given"] = r->given;
      finished["duration_s"] = r->duration_s;
      if (r->declined) finished["declined"] = true;
    }
    if (t.record) t.record(rec::kJobFinished, finished);
    const std::string what = "Slurm job " + id + " (" + t.purpose + " of " + t.experiment + ")";
    if (r && r->declined && r->error.empty()) {
      if (submitted.value("decline_avoided", false)) return std::nullopt;
      r->error = "declined a chip it was not asked to decline";
    }
    if (r && r->error.empty()) {
      on_start(r->chip);
      return r->run;
    }
    std::string message = what + " ended " + (st.state.empty() ? "unknown to Slurm" : st.state);
    if (!st.reason.empty() && st.reason != "None") message += " (reason " + st.reason + ")";
    if (!st.node.empty()) message += " on " + st.node;
    if (r) {
      message += ": " + r->error;
    } else if (!unreadable.empty()) {
      message += ": its result is unreadable: " + unreadable;
    } else if (!fs::exists(dir / "job.out")) {
      // The node wrote its output where it sees the run directory, and that is not here.
      message += ": " + shared_storage_message(st.node.empty() ? "?" : st.node, dir);
    } else {
      const std::string out = tail_of(dir / "job.out", 2000);
      message += ": no result" + (out.empty() ? std::string() : "; its output: " + out);
    }
    throw ExperimentError(contract::ErrorCause::ChipUnavailable, message);
  }

  const contract::SlurmInventory s_;
  slurm::Client client_;
  slurm::Watcher watcher_;
  const fs::path kdispatch_;
  std::mutex mu_;
  std::set<fs::path> checked_;
  std::set<std::string> in_flight_;
  std::optional<slurm::Client::Partition> partition_;
};

}  // namespace

std::unique_ptr<ChipBackend> make_slurm_backend(const contract::ChipInventory& inventory) {
  if (!inventory.slurm)
    throw Error("the inventory " + inventory.source.string() + " is not a Slurm inventory");
  return std::make_unique<SlurmChips>(inventory);
}

}  // namespace kd::dispatcher
