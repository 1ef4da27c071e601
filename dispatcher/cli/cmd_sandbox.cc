#include "common/errors.h"
#include "dispatcher/cli/commands.h"

namespace kd::cli {

// Placeholder until this command's issue lands.
int cmd_sandbox(const Args&) {
  throw Error("not implemented yet");
}

}  // namespace kd::cli
