// Long sessions against the in-process fake server's emulation (docs/fake-llm.md "Emulation"):
//
//   bench_agents_long_sessions [cost|window|limits|all]
//
// cost:   a scripted 150-turn author session with 10-40 KB of log output per turn, on each wire,
//         with prompt caching and without (no markers, a server that does not cache); the bill
//         is the fake server's token counts at the model's prices (Sonnet 4.5, GPT-4.1).
// window: a 500-turn session of the same kind against a 200k-token window: overflow answers,
//         masking steps, and transcript bytes per turn at turns 10, 100 and 500.
// limits: 200 sessions of 5 turns sharing one rate limiter against a bucket of 50 requests/s:
//         failed sessions, throughput against the bucket, 429 answers and their bursts.
#include <sys/stat.h>

#include <atomic>
#include <boost/asio/use_future.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "agents/session.h"
#include "agents/tools.h"
#include "common/policy_path.h"

namespace {

using namespace kd::agents;
namespace asio = boost::asio;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Build and test logs: 10-40 KB per call, different per call, the size drawn per call id.
class LogHost : public ToolHost {
 public:
  explicit LogHost(size_t min_bytes, size_t max_bytes) : min_(min_bytes), max_(max_bytes) {}
  ToolOutcome call(const ToolCall& c) override {
    size_t h = std::hash<std::string>{}(c.id);
    size_t bytes = min_ + h % (max_ - min_ + 1);
    std::string out;
    for (size_t line = 0; out.size() < bytes; ++line) {
      out += c.id + ":" + std::to_string(line) + " ok tile=" + std::to_string((h + line) % 97) +
             " t=" + std::to_string((h * 31 + line) % 10007) + "us\n";
    }
    out.resize(bytes);
    total_ += bytes;
    return {out};
  }
  long total() const { return total_; }

 private:
  size_t min_, max_;
  std::atomic<long> total_{0};
};

std::string script(int turns, const std::string& emulate) {
  std::string t;
  for (int i = 0; i < turns; ++i) {
    t += std::string(i ? "," : "") + R"({"text":"Next step )" + std::to_string(i) +
         R"(.","tool_calls":[{"id":"c)" + std::to_string(i) +
         R"(","name":"run","input":{"command":["make","test"]}}],"usage":{"output_tokens":150}})";
  }
  return R"({"model":"fake-author","emulate":)" + emulate + R"(,"turns":[)" + t + "]}";
}

struct Setup {
  std::string wire = "anthropic";
  std::string model = "claude-sonnet-4-5";
  int turns = 150;
  bool cache = true;
  long window = 0;  // fake server window (0: none)
  size_t min_out = 10'000, max_out = 40'000;
  std::string dir;
  std::vector<int> size_at;  // turns at which to sample the transcript size
};

struct Result {
  SessionResult session;
  FakeServer::Billing billing;
  double wall_s = 0;
  struct Size {
    int turn;
    long file;    // transcript bytes after the turn
    long output;  // tool output bytes so far
  };
  std::vector<Size> sizes;
};

ProvidersPolicy& policy() {
  static ProvidersPolicy p = ProvidersPolicy::load(kd::policy_file("providers.json"));
  return p;
}

// KD_BENCH_HIGH_WATER / KD_BENCH_LOW_WATER override the context policy's marks (fractions of
// the window), to measure what they cost.
void apply_watermarks(ContextPolicy& p) {
  if (const char* h = std::getenv("KD_BENCH_HIGH_WATER")) p.high_water = std::atof(h);
  if (const char* l = std::getenv("KD_BENCH_LOW_WATER")) p.low_water = std::atof(l);
}

Result run_one(const Setup& s) {
  std::string em = std::string(R"({"count_tokens":true,"cache":)") + (s.cache ? "true" : "false") +
                   (s.window ? ",\"context_window\":" + std::to_string(s.window) : "") + "}";
  FakeServer server(FakeScript::parse(script(s.turns, em), "bench"), "127.0.0.1:0", 2);
  ModelConfig mc;
  mc.provider = s.wire;
  mc.model = s.model;
  mc.base_url = server.base_url();
  mc.max_tokens = 4096;
  ModelHandle h = open_model(mc, policy());
  SessionConfig cfg;
  cfg.session_id = "bench";
  cfg.system_prompt = "You are a kernel author. " + std::string(12'000, 'b');
  cfg.first_user_message = "Author the rms-norm family; the plan lists three candidates.";
  cfg.tools = author_tools();
  cfg.budgets.max_turns = s.turns;
  cfg.budgets.max_tokens = 1L << 40;
  cfg.budgets.max_tool_calls = s.turns + 1;
  cfg.budgets.max_cost_usd = 0;
  cfg.prompt_cache = s.cache;
  if (s.window) cfg.context.window = s.window;
  apply_watermarks(cfg.context);
  cfg.transcript_dir = s.dir;
  Result r;
  const fs::path file = fs::path(s.dir) / "transcript.jsonl";
  LogHost host(s.min_out, s.max_out);
  cfg.on_turn = [&](const SessionResult& so_far) {
    for (int n : s.size_at) {
      if (so_far.turns == n) {
        struct stat st {};
        ::stat(file.c_str(), &st);
        r.sizes.push_back({so_far.turns, static_cast<long>(st.st_size), host.total()});
      }
    }
  };
  asio::io_context io;
  HttpClient http(io.get_executor());
  asio::thread_pool pool(1);
  auto t0 = Clock::now();
  auto f = asio::co_spawn(io, run_session(cfg, host, http, h, pool), asio::use_future);
  io.run();
  r.session = f.get();
  r.wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
  pool.join();
  r.billing = server.billing();
  return r;
}

long billed(const std::string& model, const FakeServer::Billing& b) {
  Usage u;
  u.input_tokens = b.input_tokens;
  u.cache_read_tokens = b.cache_read;
  u.cache_write_5m_tokens = b.cache_write_5m;
  u.cache_write_1h_tokens = b.cache_write_1h;
  u.output_tokens = b.output_tokens;
  return cost_microusd(*policy().price(model), u);
}

std::string tmpdir(const std::string& name) {
  std::string d =
      (fs::temp_directory_path() / ("kd-bench-" + name + "-" + std::to_string(::getpid())))
          .string();
  fs::remove_all(d);
  return d;
}

// The price list bounds the ratio from below: every cached token still costs the cache-read
// price, so a model whose reads cost a quarter of its input (gpt-4.1) cannot bill less than 25%
// of the uncached session. The OpenAI wire runs once at GPT-4.1's prices and once at GPT-5's
// (reads at a tenth, as on Anthropic); the target is checked where the price list allows it.
int cost() {
  int bad = 0;
  const std::pair<const char*, const char*> runs[] = {
      {"anthropic", "claude-sonnet-4-5"}, {"openai", "gpt-5"}, {"openai", "gpt-4.1"}};
  for (auto [wire, model] : runs) {
    Setup s;
    s.wire = wire;
    s.model = model;
    s.window = policy().context_window(model);
    s.dir = tmpdir("cost-cached-" + s.wire);
    Result with = run_one(s);
    s.cache = false;
    s.dir = tmpdir("cost-plain-" + s.wire);
    Result without = run_one(s);
    long a = billed(model, with.billing), b = billed(model, without.billing);
    const Price p = *policy().price(model);
    const double floor = 100.0 * p.cache_read / p.input;
    std::printf(
        "cost wire=%s model=%s window=%ld turns=%d: cached $%.4f (read %ld, write 5m %ld, write "
        "1h %ld, uncached %ld input tokens), uncached $%.4f (%ld input tokens); ratio %.1f%% "
        "(price floor %.0f%%); masking steps %d/%d; session account $%.4f; wall %.1fs/%.1fs\n",
        wire, model, s.window, with.session.turns, a / 1e6, with.billing.cache_read,
        with.billing.cache_write_5m, with.billing.cache_write_1h,
        with.billing.input_tokens - with.billing.cache_read - with.billing.cache_write_5m -
            with.billing.cache_write_1h,
        b / 1e6, without.billing.input_tokens, 100.0 * a / b, floor, with.session.masking_steps,
        without.session.masking_steps, with.session.cost_microusd / 1e6, with.wall_s,
        without.wall_s);
    if (with.session.turns != s.turns || (floor < 20 && 100.0 * a / b > 20)) ++bad;
    fs::remove_all(tmpdir("cost-cached-" + s.wire));
    fs::remove_all(s.dir);
  }
  return bad;
}

int window() {
  Setup s;
  s.turns = 500;
  s.window = 200'000;
  s.dir = tmpdir("window");
  // Pairs: the mean over turns 2-10, 91-100 and 491-500, and the tool output of those turns
  // (10-40 KB each, drawn per call), which the transcript holds once.
  s.size_at = {1, 10, 90, 100, 490, 500};
  Result r = run_one(s);
  std::printf("window turns=%d end=%s: overflow answers %ld, masking steps %d, wall %.1fs\n",
              r.session.turns, to_string(r.session.end_reason).c_str(), r.billing.overflows,
              r.session.masking_steps, r.wall_s);
  const auto& sz = r.sizes;
  for (size_t i = 1; i < sz.size(); i += 2) {
    const int n = sz[i].turn - sz[i - 1].turn;
    const long file = (sz[i].file - sz[i - 1].file) / n,
               out = (sz[i].output - sz[i - 1].output) / n;
    std::printf(
        "  transcript bytes per turn, turns %d-%d: %ld (tool output %ld, the rest %ld; file %ld "
        "bytes)\n",
        sz[i - 1].turn + 1, sz[i].turn, file, out, file - out, sz[i].file);
  }
  fs::remove_all(s.dir);
  return r.billing.overflows == 0 && r.session.turns == s.turns ? 0 : 1;
}

int limits() {
  const int sessions = 200, turns = 5;
  const double rate = 50;
  std::string em = R"({"requests_per_s":50,"burst":50})";
  FakeServer server(FakeScript::parse(script(turns, em), "bench"), "127.0.0.1:0", 2);
  ModelConfig mc;
  mc.provider = "anthropic";
  mc.model = "claude-sonnet-4-5";
  mc.base_url = server.base_url();
  ModelHandle h = open_model(mc, policy());
  LogHost host(1'000, 2'000);
  asio::io_context io;
  HttpClient http(io.get_executor());
  asio::thread_pool pool(2);
  const std::string root = tmpdir("limits");
  int failed = 0;
  auto t0 = Clock::now();
  for (int i = 0; i < sessions; ++i) {
    asio::co_spawn(
        io,
        [&, i]() -> asio::awaitable<void> {
          SessionConfig cfg;
          cfg.session_id = "s" + std::to_string(i);
          cfg.system_prompt = "brief";
          cfg.first_user_message = "session " + std::to_string(i);
          cfg.tools = author_tools();
          cfg.budgets.max_turns = turns;
          cfg.budgets.max_cost_usd = 0;
          cfg.transcript_dir = root + "/" + std::to_string(i);
          SessionResult r = co_await run_session(cfg, host, http, h, pool);
          if (r.end_reason != kd::contract::EndReason::budget("turns")) {
            if (failed++ < 3)
              std::fprintf(stderr, "session %d: %s\n", i, to_string(r.end_reason).c_str());
          }
        },
        asio::detached);
  }
  io.run();
  double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  pool.join();
  FakeServer::Billing b = server.billing();
  // A burst: 429s less than a second apart.
  int bursts = 0;
  for (size_t i = 0; i < b.rate_limited_at_s.size(); ++i)
    if (i == 0 || b.rate_limited_at_s[i] - b.rate_limited_at_s[i - 1] > 1.0) ++bursts;
  // The bucket starts full (50), so the sustained rate is what came after the first 50.
  double throughput = (b.requests - 50) / wall;
  RateLimiter::Stats st = h.endpoint.limiter->stats();
  std::printf(
      "limits sessions=%d turns=%d bucket=%.0f req/s: failed %d, %ld requests in %.1fs, "
      "throughput %.1f req/s (%.0f%% of the bucket), 429 answers %ld in %d bursts (%.2f per "
      "minute), limiter cuts %ld, cap now %d\n",
      sessions, turns, rate, failed, b.requests, wall, throughput, 100 * throughput / rate,
      b.rate_limited, bursts, bursts / (wall / 60), st.cuts, st.in_flight_cap);
  fs::remove_all(root);
  return failed == 0 && throughput >= 0.9 * rate && bursts <= std::max(1.0, wall / 60) ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each figure shows as soon as it is measured
  std::string what = argc > 1 ? argv[1] : "all";
  int bad = 0;
  if (what == "cost" || what == "all") bad += cost();
  if (what == "window" || what == "all") bad += window();
  if (what == "limits" || what == "all") bad += limits();
  return bad == 0 ? 0 : 1;
}
