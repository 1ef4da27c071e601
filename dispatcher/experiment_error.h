// An experiment that ended in an error rather than a verdict (contract/verdict.h): the provider,
// a budget that cannot be enforced, the verify tool or a chip failed. Thrown by the author and
// verification steps; the campaign journals it with its cause and retries it on --resume, the
// commands exit with kExitTempFail. Never a statement about the candidate, never filed.
#pragma once

#include <string>

#include "agents/provider_failure.h"
#include "common/errors.h"
#include "contract/verdict.h"

namespace kd::dispatcher {

class ExperimentError : public InfraError {
 public:
  ExperimentError(contract::ErrorCause cause, const std::string& message)
      : InfraError(message), cause_(cause) {}
  contract::ErrorCause cause() const { return cause_; }

 private:
  contract::ErrorCause cause_;
};

// The error cause of a provider's give-up.
contract::ErrorCause error_cause(agents::ProviderFailureKind kind);

// One line for the person in the morning: what failed and what to do about it.
std::string provider_failure_message(const agents::ProviderFailure& f);

}  // namespace kd::dispatcher
