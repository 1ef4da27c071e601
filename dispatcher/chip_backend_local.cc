// The local backend: the flock code that has always guarded this host's chips, unchanged.
#include <cstdio>

#include "common/errors.h"
#include "dispatcher/chip_backend.h"
#include "dispatcher/chip_lock.h"
#include "dispatcher/experiment_error.h"

namespace kd::dispatcher {
namespace {

class LocalChips : public ChipBackend {
 public:
  explicit LocalChips(const contract::ChipInventory& inv) : chips_(int(inv.chips.size())) {}

  verify::ChipRun run(const ChipTask& t,
                      const std::function<void(const std::string&)>& on_start) override {
    if (t.session_box) return run_in_session(t, on_start);
    std::optional<std::pair<ChipLock, size_t>> got;
    try {
      got = ChipLock::wait_any(t.candidates, t.deadline, [&] {
        std::string ids;
        for (const auto& c : t.candidates)
          ids += (ids.empty() ? "" : ", ") + c.id + " (" + c.lock.string() + ")";
        std::fprintf(stderr, "kdispatch verify: waiting for a chip lock: %s\n", ids.c_str());
      });
    } catch (const Error& e) {
      throw ExperimentError(
          contract::ErrorCause::ChipUnavailable,
          std::string("no chip could be locked for the verification: ") + e.what());
    }
    if (!got)
      throw ExperimentError(contract::ErrorCause::ChipUnavailable,
                            "no chip became free for the verification");
    auto& [lock, which] = *got;
    const contract::Chip& chip = t.candidates[which];
    on_start(chip.id);
    return verify::run_chip_job_on(t.job, chip);
  }

  void settle(const std::vector<nlohmann::json>&) override {}
  int parallel() override { return chips_; }
  void cancel_all() override {}
  bool is_slurm() const override { return false; }

 private:
  // run_on_chip: the session's box runs the command with the chip exposed, for that call only.
  verify::ChipRun run_in_session(const ChipTask& t,
                                 const std::function<void(const std::string&)>& on_start) {
    const contract::Chip& chip = t.candidates.at(0);
    auto got = ChipLock::wait_any({chip}, t.deadline);
    if (!got) {
      throw ExperimentError(
          contract::ErrorCause::ChipUnavailable,
          "chip " + chip.id + " stayed locked by another process (" + chip.lock.string() + ")");
    }
    on_start(chip.id);
    verify::ChipRun out;
    out.chip = chip.id;
    out.result = t.session_box->run(t.job.request);
    return out;  // the lock covers the device run only
  }

  int chips_;
};

}  // namespace

std::unique_ptr<ChipBackend> make_local_backend(const contract::ChipInventory& inventory) {
  return std::make_unique<LocalChips>(inventory);
}

std::unique_ptr<ChipBackend> make_chip_backend(const contract::ChipInventory& inventory) {
  return inventory.slurm ? make_slurm_backend(inventory) : make_local_backend(inventory);
}

}  // namespace kd::dispatcher
