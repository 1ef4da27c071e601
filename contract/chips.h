// The chip inventory (docs/dispatcher.md, docs/slurm.md): policies/chips.json or --chips FILE.
// Local form ("scheduler": "local" or absent), chips listed and locked with flock:
//   {"chips": [{"id": "0", "kind": "tpu", "lock": "/tmp/tpu-chip-0.lock",
//               "env": {"TPU_VISIBLE_DEVICES": "0"}, "devices": ["/dev/accel0"]}, ...]}
// Slurm form, chips are a partition's GRES that Slurm assigns job by job:
//   {"scheduler": "slurm", "partition": "tpu", "gres": "gpu:tpu:1",
//    "chip_env": "TPU_VISIBLE_DEVICES", ...optional fields of SlurmInventory}
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kd::contract {

struct Chip {
  std::string id;
  std::string kind;                            // tpu | gpu | cpu
  std::filesystem::path lock;                  // flock(2) target; default /tmp/tpu-chip-<id>.lock
  std::map<std::string, std::string> env;      // set for runs on this chip
  std::vector<std::filesystem::path> devices;  // device nodes exposed to those runs only
};

// The Slurm form's fields; the optional ones carry their documented defaults.
struct SlurmInventory {
  std::string partition;     // sbatch --partition
  std::string gres;          // one chip, as sbatch --gres takes it: "gpu:tpu:1"
  std::string gres_name;     // the same without the count ("gpu:tpu"): a job of n chips asks n
  std::string chip_env;      // the variable a job's box sets to the chip's index
  std::string kind = "tpu";  // tpu | gpu | cpu, as a local chip's
  std::vector<std::string> devices;  // device nodes of the chip, "{index}" replaced on the node
  // One squeue for every job in flight, this often: how soon a job that ends without a result
  // (cancelled, failed, node down) is noticed. One that writes its result is noticed from it.
  double poll_interval_s = 5;
  std::optional<int> time_limit_minutes;   // sbatch --time; default the partition's
  std::vector<std::string> sbatch_args;    // passed to sbatch verbatim
  std::string job_dir = "slurm-jobs";      // job files and results, under each run directory
  std::map<std::string, std::string> env;  // for sbatch/squeue/scancel (SLURM_CONF); else inherited
  // The kdispatch-full the nodes run (a path every node sees); default this very binary.
  std::filesystem::path kdispatch;
  int parallel = 0;  // chips a campaign may use at once; 0: the partition's GRES count
};

struct ChipInventory {
  std::vector<Chip> chips;  // the local form's; empty under Slurm
  std::filesystem::path source;
  std::optional<SlurmInventory> slurm;  // "scheduler": "slurm"

  // Under Slurm no chip is fixed before a job runs: the chip a brief and the author's session
  // name is the partition itself ("slurm:<partition>"), of the inventory's kind.
  Chip slurm_chip() const;

  const Chip* find(const std::string& id) const;
  std::vector<std::string> ids() const;
};

// Parses and validates an inventory; throws kd::Error naming the file, the chip and the field
// ("chips.json: chips[1] (id \"3\"): devices[0] must be an absolute path").
ChipInventory parse_chip_inventory(const std::string& json_text,
                                   const std::filesystem::path& source);
ChipInventory load_chip_inventory(const std::filesystem::path& path);

// --chips FILE when given, else the default policies/chips.json.
ChipInventory load_chip_inventory_or_default(const std::optional<std::filesystem::path>& path);

}  // namespace kd::contract
