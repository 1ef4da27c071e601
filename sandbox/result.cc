#include "sandbox/result.h"

#include <csignal>
#include <cstring>

#include "common/errors.h"

namespace kd::sandbox {

nlohmann::json denial_json(const Denial& d) {
  nlohmann::json j = {{"layer", d.layer}, {"op", d.op}, {"detail", d.detail}};
  if (!d.path.empty()) j["path"] = d.path;
  if (d.err != 0) j["errno"] = errno_name(d.err);
  return j;
}

nlohmann::json RunResult::to_json() const {
  nlohmann::json j = {{"exit_code", exit_code},
                      {"signal", signal},
                      {"timed_out", timed_out},
                      {"killed_by_limit", killed_by_limit},
                      {"stdout", out},
                      {"stderr", err},
                      {"stdout_truncated", out_truncated},
                      {"stderr_truncated", err_truncated},
                      {"wall_s", wall_s}};
  if (signal != 0) j["signal_name"] = sigabbrev_np(signal) ? sigabbrev_np(signal) : "";
  if (killed_by_limit) j["limit"] = limit;
  j["denials"] = nlohmann::json::array();
  for (const auto& d : denials)
    j["denials"].push_back(denial_json(d));
  j["unobserved_layers"] = unobserved_layers;
  return j;
}

}  // namespace kd::sandbox
