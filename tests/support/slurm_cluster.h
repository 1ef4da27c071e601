// The Slurm cluster the Slurm tests share: the ctest fixture Slurm.ClusterUp brings it up with
// tests/slurm/cluster.sh and passes its SLURM_CONF in the tests' environment. Also Slurm's own
// record of finished jobs (the jobcomp/filetxt file), for tests that check what ran where.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace kd::test {

// What this machine lacks to run a Slurm cluster ("sbatch slurmd root"), "" when nothing: the
// answer of `tests/slurm/cluster.sh missing`.
std::string slurm_missing();

// The fixture's SLURM_CONF; "" when the environment has none or names no file.
std::string slurm_conf();

// At the top of a Slurm test: skipped naming what is missing on a machine without Slurm or
// root; failed (never skipped) when Slurm is there but the fixture's cluster is not.
#define KD_REQUIRE_SLURM()                                                                \
  do {                                                                                    \
    const std::string kd_missing_ = ::kd::test::slurm_missing();                          \
    if (!kd_missing_.empty())                                                             \
      GTEST_SKIP() << "the Slurm tests need munge, slurmctld, slurmd and slurm-client "   \
                      "(Debian 12 packages) and root; missing: "                          \
                   << kd_missing_;                                                        \
    ASSERT_FALSE(::kd::test::slurm_conf().empty())                                        \
        << "SLURM_CONF is not set to a file: run the Slurm tests through ctest (fixture " \
           "Slurm.ClusterUp) or after `eval \"$(tests/slurm/cluster.sh up)\"`";           \
  } while (0)

// One line of the jobcomp file: a job Slurm finished.
struct FinishedJob {
  std::string id, name, state, node, partition;
  int exit_code = -1, signal = 0;  // ExitCode=3:0
  std::string start, end;          // StartTime/EndTime as Slurm writes them (local time)
  std::string tres;                // Tres= (cpu=1,node=1,...; the GRES index is not recorded)
};

// The jobcomp file of the cluster SLURM_CONF names (its JobCompLoc); "" when it has none.
std::filesystem::path jobcomp_file();

// Every finished job in the file, in the order Slurm finished them.
std::vector<FinishedJob> read_jobcomp(const std::filesystem::path& file);

// The job's last record, when Slurm finished it.
std::optional<FinishedJob> finished_job(const std::string& id);

}  // namespace kd::test
