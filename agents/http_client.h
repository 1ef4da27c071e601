// HTTP over libcurl's multi interface driven by one Boost.Asio io_context: curl's socket and
// timer callbacks become asio waits, so any number of transfers share one thread. TLS
// verification stays on; proxies come from the environment (http_proxy, https_proxy,
// no_proxy), which libcurl reads itself.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "agents/asio.h"

namespace kd::agents {

struct HttpRequest {
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  std::string body;                  // POSTed when not empty
  std::chrono::milliseconds connect_timeout{10'000};
  std::chrono::milliseconds first_byte_timeout{120'000};  // request sent -> first response byte
  std::chrono::milliseconds idle_timeout{120'000};        // between progress marks (see DataSink)
};

struct HttpResponse {
  long status = 0;                             // 0 when no response arrived
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;  // the whole body, except a 2xx body handed to a DataSink
  // Transport failure; empty when the response arrived completely.
  //   error_kind: connect | timeout_first_byte | timeout_idle | transport | aborted
  std::string error_kind;
  std::string error;
};

// Receives the body of a 2xx response as it arrives. Returns true when the bytes completed a
// unit of progress (an SSE event), which restarts the idle deadline; returning false never
// aborts. A sink that wants to stop the transfer throws nothing: it sets its own flag and the
// caller inspects it after perform() returns.
using DataSink = std::function<bool(std::string_view)>;

class HttpClient {
 public:
  explicit HttpClient(boost::asio::any_io_executor ex);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Runs one request to completion on the client's executor. Never throws for network
  // problems: they are reported in HttpResponse::error_kind/error.
  boost::asio::awaitable<HttpResponse> perform(HttpRequest request, DataSink sink = {});

 private:
  struct Impl;
  struct Transfer;
  std::shared_ptr<Impl> impl_;
};

}  // namespace kd::agents
