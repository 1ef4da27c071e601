// What the dispatcher adds to contract::ExperimentError: the error cause and the morning's
// message for a provider's give-up.
#pragma once

#include <string>

#include "agents/provider_failure.h"
#include "contract/experiment_error.h"
#include "contract/verdict.h"

namespace kd::dispatcher {

using contract::ExperimentError;

// The error cause of a provider's give-up.
contract::ErrorCause error_cause(agents::ProviderFailureKind kind);

// One line for the person in the morning: what failed and what to do about it.
std::string provider_failure_message(const agents::ProviderFailure& f);

}  // namespace kd::dispatcher
