// An experiment that ended in an error rather than a verdict (contract/verdict.h): the provider,
// a budget that cannot be enforced, the verify tool or a chip failed. Thrown by the author and
// verification steps; the campaign journals it with its cause and retries it on --resume, the
// commands exit with kExitTempFail. Never a statement about the candidate, never filed.
#pragma once

#include <string>

#include "common/errors.h"
#include "contract/verdict.h"

namespace kd::contract {

class ExperimentError : public InfraError {
 public:
  ExperimentError(ErrorCause cause, const std::string& message)
      : InfraError(message), cause_(cause) {}
  ErrorCause cause() const { return cause_; }

 private:
  ErrorCause cause_;
};

}  // namespace kd::contract
