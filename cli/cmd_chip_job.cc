#include "cli/args.h"
#include "cli/commands.h"
#include "common/errors.h"
#include "dispatcher/chip_job.h"

namespace kd::cli {

// kdispatch-full chip-job FILE: what a Slurm job's batch script runs on the node (docs/slurm.md).
// Exit 0 once the result file is written, whatever the command in the box did.
int cmd_chip_job(const Args& args) {
  ParsedArgs p = parse_args(args, {});
  if (p.positional.size() != 1) throw UsageError("expected one job file");
  return dispatcher::run_chip_job_file(p.positional[0]);
}

}  // namespace kd::cli
