// policies/providers.json: provider endpoints, key variables, and per model pattern the context
// window and the prices (input, output, cache writes per TTL, cache reads) in integer
// micro-dollars per million tokens, so that sums over thousands of turns never drift.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agents/types.h"

namespace kd::agents {

struct ProviderEntry {
  std::string wire;      // anthropic | openai
  std::string base_url;  // default server root
  std::string key_env;   // empty: no key
  std::string default_model;
  bool prompt_cache_key = false;  // the server routes caches by a per-session prompt_cache_key
};

// Micro-dollars per million tokens: USD 3.00 per MTok is 3'000'000.
struct Price {
  long input = 0;
  long output = 0;
  long cache_write_5m = 0;  // also the write price of OpenAI's single short TTL
  long cache_write_1h = 0;
  long cache_read = 0;
};

struct ModelEntry {
  std::string pattern;      // '*' wildcard
  long context_window = 0;  // tokens; 0: unknown, no context management
  std::optional<Price> price;
};

struct ProvidersPolicy {
  std::map<std::string, ProviderEntry> providers;
  std::vector<ModelEntry> models;  // first match wins

  // Loads and validates; throws kd::Error naming the file and the bad field.
  static ProvidersPolicy load(const std::filesystem::path& path);
  // The first model entry whose pattern matches, if any.
  const ModelEntry* model(const std::string& name) const;
  std::optional<Price> price(const std::string& model) const;
  // Whether a cost budget can be kept for this model (preflight refuses a budget without one).
  bool has_price(const std::string& model) const { return price(model).has_value(); }
  long context_window(const std::string& model) const;           // 0 when unknown
  const ProviderEntry& provider(const std::string& name) const;  // throws naming the provider
};

// What a turn cost, from its usage: uncached input, cache writes per TTL and reads at their
// prices, output at its price; rounded up to a whole micro-dollar. Cache counts the provider did
// not report are billed as uncached input (never less than the bill).
long cost_microusd(const Price& p, const Usage& u);

// The most the next call can cost: every input token at the dearest input rate (uncached or a
// 1-hour write) and every allowed output token. The session reserves it before calling.
long worst_case_microusd(const Price& p, long input_tokens, long max_output_tokens);

inline double microusd_to_usd(long micro) {
  return static_cast<double>(micro) / 1e6;
}

}  // namespace kd::agents
