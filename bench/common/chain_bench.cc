// Throughput of transcript chain verification (the audit issue's 500 MB/s goal is measured on
// whole files by the audit benchmarks; this isolates the per-line cost).
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "contract/transcript_chain.h"

namespace {

std::vector<std::string> make_chain(size_t lines, size_t payload) {
  std::vector<std::string> out;
  std::string prev(kd::contract::kZeroHash);
  std::string data = "{\"text\":\"" + std::string(payload, 'x') + "\"}";
  for (size_t i = 0; i < lines; ++i) {
    const char* type = i == 0 ? "header" : (i + 1 == lines ? "end" : "tool_result");
    out.push_back(kd::contract::seal_chain_line(
        {i, prev, "2026-12-02T00:00:00Z", "s", "author", type, data}, &prev));
  }
  return out;
}

void BM_ChainVerify(benchmark::State& state) {
  auto lines = make_chain(4096, static_cast<size_t>(state.range(0)));
  size_t bytes = 0;
  for (const auto& l : lines)
    bytes += l.size() + 1;
  for (auto _ : state) {
    kd::contract::ChainVerifier v;
    for (const auto& l : lines)
      v.feed(l);
    benchmark::DoNotOptimize(v.finish(true));
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}
BENCHMARK(BM_ChainVerify)->Arg(256)->Arg(1024)->Arg(16384);

}  // namespace

BENCHMARK_MAIN();
