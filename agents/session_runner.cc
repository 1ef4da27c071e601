#include "agents/session_runner.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_future.hpp>
#include <future>

#include "agents/http_client.h"
#include "agents/providers_policy.h"
#include "common/policy_path.h"

namespace kd::agents {

agents::SessionResult run_session_blocking(const agents::SessionConfig& config,
                                           agents::ToolHost& host,
                                           const agents::ModelConfig& model_config) {
  boost::asio::io_context io;
  agents::HttpClient http(io.get_executor());
  boost::asio::thread_pool pool(2);
  agents::ModelHandle model = agents::open_model(
      model_config, agents::ProvidersPolicy::load(policy_file("providers.json")));
  std::future<agents::SessionResult> done = boost::asio::co_spawn(
      io, agents::run_session(config, host, http, model, pool), boost::asio::use_future);
  io.run();
  agents::SessionResult result = done.get();
  pool.join();
  return result;
}

}  // namespace kd::agents
