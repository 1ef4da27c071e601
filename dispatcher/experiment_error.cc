#include "dispatcher/experiment_error.h"

namespace kd::dispatcher {

contract::ErrorCause error_cause(agents::ProviderFailureKind kind) {
  using K = agents::ProviderFailureKind;
  using C = contract::ErrorCause;
  switch (kind) {
    case K::Outage:
      return C::ProviderOutage;
    case K::AuthRefused:
      return C::ProviderAuth;
    case K::SpendCap:
      return C::ProviderSpendCap;
    case K::Overloaded:
      return C::ProviderOverloaded;
    case K::Protocol:
      return C::ProviderProtocol;
  }
  return C::ProviderProtocol;
}

std::string provider_failure_message(const agents::ProviderFailure& f) {
  using K = agents::ProviderFailureKind;
  std::string what;
  switch (f.kind) {
    case K::Outage:
      what = "the provider did not answer";
      break;
    case K::AuthRefused:
      what = "the provider refused the API key: check the key and its access to the model";
      break;
    case K::SpendCap:
      what = "the provider's spend cap or quota is exhausted: raise it or wait for it to reset";
      break;
    case K::Overloaded:
      what = "the provider stayed overloaded or rate limited past the retries";
      break;
    case K::Protocol:
      what = "the provider rejected the request or answered unreadably";
      break;
  }
  return what + " (" + f.cause + (f.detail.empty() ? "" : ": " + f.detail) + ")";
}

}  // namespace kd::dispatcher
