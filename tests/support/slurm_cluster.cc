#include "tests/support/slurm_cluster.h"

#include <cstdlib>
#include <fstream>

#include "common/text.h"
#include "dispatcher/slurm_client.h"
#include "tests/support/process.h"

namespace kd::test {

namespace fs = std::filesystem;

std::string slurm_missing() {
  ProcessResult r = run_process({KD_SOURCE_DIR "/tests/slurm/cluster.sh", "missing"});
  if (r.exit_code != 0) return "tests/slurm/cluster.sh missing: " + r.err;
  return std::string(trim(r.out));
}

std::string slurm_conf() {
  const char* conf = std::getenv("SLURM_CONF");
  if (!conf || !fs::is_regular_file(conf)) return "";
  return conf;
}

fs::path jobcomp_file() {
  std::ifstream in(slurm_conf());
  for (std::string line; std::getline(in, line);)
    if (starts_with(line, "JobCompLoc=")) return fs::path(std::string(trim(line.substr(11))));
  return {};
}

std::vector<FinishedJob> read_jobcomp(const fs::path& file) {
  std::vector<FinishedJob> out;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    if (!starts_with(line, "JobId=")) continue;
    auto f = dispatcher::slurm::parse_key_values(line);
    dispatcher::slurm::JobStatus s = dispatcher::slurm::status_from_key_values(f);
    FinishedJob j;
    j.id = s.id;
    j.state = s.state;
    j.node = s.node;
    j.exit_code = s.exit_code;
    j.signal = s.signal;
    j.name = f["Name"];
    j.partition = f["Partition"];
    j.start = f["StartTime"];
    j.end = f["EndTime"];
    j.tres = f["Tres"];
    out.push_back(std::move(j));
  }
  return out;
}

std::optional<FinishedJob> finished_job(const std::string& id) {
  std::optional<FinishedJob> last;
  for (auto& j : read_jobcomp(jobcomp_file()))
    if (j.id == id) last = std::move(j);
  return last;
}

}  // namespace kd::test
