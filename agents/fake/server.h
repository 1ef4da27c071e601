// `kdispatch fake-llm`: a real HTTP/1.1 server on loopback speaking the Anthropic Messages and
// OpenAI Chat Completions wire formats (streaming and not) from a FakeScript, with injected
// faults. Tests and the demo use it as the model; it runs on its own threads. Each connection
// carries one request, which must arrive whole within the read deadline; a connection that fails
// for another reason than the client leaving is reported on stderr ("fake-llm: connection from
// 127.0.0.1:PORT: ...").
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "agents/fake/script.h"

namespace kd::agents {

class FakeServer {
 public:
  static constexpr std::chrono::milliseconds kReadDeadline{30'000};

  // Listens on `listen` ("127.0.0.1:0" picks a free port); refuses non-loopback addresses.
  explicit FakeServer(FakeScript script, const std::string& listen = "127.0.0.1:0", int threads = 1,
                      std::chrono::milliseconds read_deadline = kReadDeadline);
  ~FakeServer();
  FakeServer(const FakeServer&) = delete;
  FakeServer& operator=(const FakeServer&) = delete;

  std::string base_url() const;  // http://127.0.0.1:PORT
  unsigned short port() const;

  // What the server received, in arrival order (for tests and debugging).
  struct Seen {
    std::string wire;                            // anthropic | openai | unknown
    std::map<std::string, std::string> headers;  // names lower-cased
    std::string body;
    size_t turn = 0;
    int attempt = 0;  // 0-based attempt of this exact request body
  };
  std::vector<Seen> requests() const;
  // Requests answered with a scripted turn and no injected fault (the turns a client paid for).
  size_t answered() const;

  // What the server billed and refused (docs/fake-llm.md "Emulation").
  struct Billing {
    long requests = 0;      // answered without a fault
    long input_tokens = 0;  // whole prompts: uncached + writes + reads
    long cache_read = 0, cache_write_5m = 0, cache_write_1h = 0;
    long output_tokens = 0;
    long rate_limited = 0;                  // 429 answers of the buckets
    long overflows = 0;                     // 400 answers of the context window
    std::vector<double> rate_limited_at_s;  // steady-clock seconds of each 429
  };
  Billing billing() const;
  // Moves the emulation's clock (cache lifetimes, buckets) forward, as if time had passed.
  void advance_clock(std::chrono::milliseconds by);

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace kd::agents
