// N concurrent streaming sessions against a fake-llm server from one thread: added latency
// per SSE event (server write -> text delta assembled by the client), each session's wait for
// its first event (session start -> first text delta, the server's own start-up included) and
// peak RSS.
//
//   bench_agents_streams BASE_URL [SESSIONS] [WIRE] [TRANSCRIPT_ROOT] [ROUNDS]
//
// Rounds run one after another in the same process (default 2): the first is a cold process
// (heap growing page by page, first connections), the later ones a dispatcher that has been
// running; each round's figures are printed on their own. START_SPREAD_MS (default 50) is the
// interval over which the sessions of a round start.
//
// Without TRANSCRIPT_ROOT each session is one LlmClient::complete call. With it, each is a
// whole run_session writing its durable transcript under TRANSCRIPT_ROOT/<n>/ (header,
// request, response, end records), so the figure includes the transcript writer.
//
// The server (kdispatch fake-llm, a separate process) stamps each text delta with
// CLOCK_MONOTONIC microseconds at write time; the client subtracts that from its own clock
// when the assembler hands the delta over, so the figure covers the kernel, libcurl, the SSE
// parser and the provider assembler, plus any queueing on the single client thread.
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "agents/asio.h"
#include "agents/http_client.h"
#include "agents/llm_client.h"
#include "agents/session.h"

namespace asio = boost::asio;
using namespace kd::agents;

namespace {

long long now_us() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1'000'000LL + ts.tv_nsec / 1000;
}

struct Round {
  std::vector<long long> lat;          // microseconds
  std::vector<long long> first_event;  // per session: start -> first text delta, microseconds
  int ok = 0, failed = 0;
  double wall_s = 0, cpu_s = 0;
};

double cpu_seconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
         ru.ru_stime.tv_usec / 1e6;
}

// One round: `sessions` sessions started one after another over `spread_us`, then streaming.
Round run_round(asio::io_context& io, HttpClient& http, asio::thread_pool& pool,
                const std::string& wire, const std::string& base, int sessions,
                const std::string& transcripts, long long spread_us) {
  Round round;
  round.lat.reserve(static_cast<size_t>(sessions) * 64);
  round.first_event.reserve(static_cast<size_t>(sessions));
  std::vector<std::unique_ptr<LlmClient>> clients;
  for (int i = 0; i < sessions; ++i) {
    Timeouts t;
    t.connect = std::chrono::seconds(30);
    clients.push_back(std::make_unique<LlmClient>(
        http, Endpoint{wire, base, "", "fake-author", 256, true, {}, {}}, RetryPolicy{}, t));
  }
  // Full sessions: no tool calls in the script, so each ends after its one turn.
  struct NoTools : ToolHost {
    ToolOutcome call(const ToolCall&) override { return {"no tools in this benchmark", true}; }
  } no_tools;
  ModelHandle model;
  model.provider = wire;
  model.endpoint = Endpoint{wire, base, "", "fake-author", 256, true, {}, {}};
  const double cpu0 = cpu_seconds();
  const long long t0 = now_us();
  for (int i = 0; i < sessions; ++i) {
    asio::co_spawn(
        io,
        [&, i]() -> asio::awaitable<void> {
          // Starts are spread (by default over one pacing interval): real sessions do not
          // stream in lockstep.
          asio::steady_timer start(io, std::chrono::microseconds(spread_us * i / sessions));
          co_await start.async_wait(asio::use_awaitable);
          const long long started = now_us();
          bool first = true;
          CallHooks hooks;
          hooks.on_text = [&](std::string_view piece) {
            long long sent = 0;
            std::from_chars(piece.data(), piece.data() + piece.size(), sent);
            if (sent <= 0) return;
            long long now = now_us();
            round.lat.push_back(now - sent);
            if (first) round.first_event.push_back(now - started);
            first = false;
          };
          try {
            if (transcripts.empty()) {
              Conversation c;
              c.messages.push_back({Message::Kind::user, "session " + std::to_string(i), {}, {}});
              co_await clients[static_cast<size_t>(i)]->complete(
                  c, {}, hooks, std::chrono::steady_clock::now() + std::chrono::minutes(5));
            } else {
              SessionConfig cfg;
              cfg.session_id = "bench-" + std::to_string(i);
              cfg.first_user_message = "session " + std::to_string(i);
              cfg.budgets.max_cost_usd = 0;
              cfg.max_nudges = 0;
              cfg.transcript_dir = transcripts + "/" + std::to_string(i);
              cfg.timeouts.connect = std::chrono::seconds(30);
              cfg.on_text = hooks.on_text;
              SessionResult r = co_await run_session(cfg, no_tools, http, model, pool);
              if (r.end_reason != kd::contract::EndReason::without_finish())
                throw std::runtime_error(to_string(r.end_reason));
            }
            ++round.ok;
          } catch (const std::exception& e) {
            if (round.failed++ < 3) std::fprintf(stderr, "session %d: %s\n", i, e.what());
          }
        },
        asio::detached);
  }
  io.restart();
  io.run();
  round.wall_s = (now_us() - t0) / 1e6;
  round.cpu_s = cpu_seconds() - cpu0;
  return round;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: %s BASE_URL [SESSIONS] [anthropic|openai] [TRANSCRIPT_ROOT] [ROUNDS]\n",
                 argv[0]);
    return 64;
  }
  std::string base = argv[1];
  int sessions = argc > 2 ? std::atoi(argv[2]) : 1000;
  std::string wire = argc > 3 ? argv[3] : "anthropic";
  std::string transcripts = argc > 4 ? argv[4] : "";
  int rounds = argc > 5 ? std::atoi(argv[5]) : 2;
  // Sessions start one after another over this interval (default: one pacing interval).
  const char* spread = std::getenv("START_SPREAD_MS");
  const long long spread_ms = spread ? std::atoll(spread) : 50;

  asio::io_context io(1);
  HttpClient http(io.get_executor());
  asio::thread_pool pool(2);
  int failed = 0;
  for (int n = 1; n <= rounds; ++n) {
    Round r = run_round(io, http, pool, wire, base, sessions,
                        transcripts.empty() ? "" : transcripts + "/round" + std::to_string(n),
                        spread_ms * 1000);
    failed += r.failed;
    std::sort(r.lat.begin(), r.lat.end());
    std::sort(r.first_event.begin(), r.first_event.end());
    auto pct = [](const std::vector<long long>& v, double p) {
      return v.empty() ? 0.0
                       : v[std::min(v.size() - 1, static_cast<size_t>(p * v.size()))] / 1000.0;
    };
    std::printf("wire=%s mode=%s round=%d (%s) sessions=%d ok=%d failed=%d events=%zu wall=%.2fs\n",
                wire.c_str(), transcripts.empty() ? "client" : "session+transcript", n,
                n == 1 ? "cold: a fresh process" : "warm: the same process again", sessions, r.ok,
                r.failed, r.lat.size(), r.wall_s);
    std::printf("  added latency per SSE event: p50=%.3f ms p99=%.3f ms max=%.3f ms\n",
                pct(r.lat, 0.50), pct(r.lat, 0.99), pct(r.lat, 1.0));
    std::printf("  session start -> first event: p50=%.3f ms p99=%.3f ms max=%.3f ms\n",
                pct(r.first_event, 0.50), pct(r.first_event, 0.99), pct(r.first_event, 1.0));
    std::printf("  client CPU: %.2f s (%.1f us per event, HTTP setup included)\n", r.cpu_s,
                r.lat.empty() ? 0.0 : r.cpu_s * 1e6 / static_cast<double>(r.lat.size()));
  }
  pool.join();
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  std::printf("  peak RSS: %.1f MB\n", ru.ru_maxrss / 1024.0);
  return failed == 0 ? 0 : 1;
}
