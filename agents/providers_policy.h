// policies/providers.json: provider endpoints, key variables and the price table.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kd::agents {

struct ProviderEntry {
  std::string wire;      // anthropic | openai
  std::string base_url;  // default server root
  std::string key_env;   // empty: no key
  std::string default_model;
};

struct Price {
  double input_per_mtok = 0;
  double output_per_mtok = 0;
};

struct ProvidersPolicy {
  std::map<std::string, ProviderEntry> providers;
  std::vector<std::pair<std::string, Price>> prices;  // model pattern ('*' wildcard) -> price

  // Loads and validates; throws kd::Error naming the file and the bad field.
  static ProvidersPolicy load(const std::filesystem::path& path);
  // The first price whose pattern matches the model.
  std::optional<Price> price(const std::string& model) const;
  const ProviderEntry& provider(const std::string& name) const;  // throws naming the provider
};

double cost_usd(const Price& p, long input_tokens, long output_tokens);

}  // namespace kd::agents
