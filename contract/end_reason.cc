#include "contract/end_reason.h"

namespace kd::contract {
namespace {

constexpr std::string_view kBudget = "budget:";
constexpr std::string_view kProvider = "provider:";

}  // namespace

std::string to_string(const EndReason& r) {
  switch (r.kind) {
    case EndReason::Kind::Finished:
      return "finished";
    case EndReason::Kind::EndedWithoutFinish:
      return "ended_without_finish";
    case EndReason::Kind::Budget:
      return std::string(kBudget) + r.detail;
    case EndReason::Kind::Provider:
      return std::string(kProvider) + r.detail;
    case EndReason::Kind::Stopped:
      return "stopped_by_supervisor";
  }
  return "ended_without_finish";
}

std::optional<EndReason> parse_end_reason(std::string_view s) {
  if (s == "finished") return EndReason::finished();
  if (s == "ended_without_finish") return EndReason::without_finish();
  if (s == "stopped_by_supervisor") return EndReason::stopped();
  if (s.substr(0, kBudget.size()) == kBudget && s.size() > kBudget.size())
    return EndReason::budget(std::string(s.substr(kBudget.size())));
  if (s.substr(0, kProvider.size()) == kProvider && s.size() > kProvider.size())
    return EndReason::provider(std::string(s.substr(kProvider.size())));
  return std::nullopt;
}

}  // namespace kd::contract
