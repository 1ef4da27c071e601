#include "agents/providers_policy.h"

#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "common/files.h"
#include "common/glob.h"

namespace kd::agents {

ProvidersPolicy ProvidersPolicy::load(const std::filesystem::path& path) {
  using json = nlohmann::json;
  std::string where = path.string();
  json j = json::parse(read_file(path), nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw Error(where + ": not a JSON object");
  ProvidersPolicy p;
  if (!j.contains("providers") || !j["providers"].is_object())
    throw Error(where + ": no \"providers\" object");
  for (auto& [name, e] : j["providers"].items()) {
    auto field = [&](const char* k) {
      if (!e.is_object() || !e.contains(k) || !e[k].is_string()) {
        throw Error(where + ": providers." + name + "." + k + " must be a string");
      }
      return e[k].get<std::string>();
    };
    ProviderEntry pe{field("wire"), field("base_url"), field("key_env"), field("default_model")};
    if (pe.wire != "anthropic" && pe.wire != "openai") {
      throw Error(where + ": providers." + name + ".wire must be anthropic or openai, not " +
                  quote(pe.wire));
    }
    p.providers[name] = std::move(pe);
  }
  if (!j.contains("prices_usd_per_mtok") || !j["prices_usd_per_mtok"].is_array()) {
    throw Error(where + ": no \"prices_usd_per_mtok\" array");
  }
  size_t i = 0;
  for (const json& e : j["prices_usd_per_mtok"]) {
    std::string at = where + ": prices_usd_per_mtok[" + std::to_string(i++) + "]";
    if (!e.is_object() || !e.contains("model") || !e["model"].is_string() || !e.contains("input") ||
        !e["input"].is_number() || !e.contains("output") || !e["output"].is_number()) {
      throw Error(at + " needs model (string), input and output (numbers, USD per million tokens)");
    }
    double in = e["input"], out = e["output"];
    if (in < 0 || out < 0) throw Error(at + ": prices must not be negative");
    p.prices.emplace_back(e["model"].get<std::string>(), Price{in, out});
  }
  return p;
}

std::optional<Price> ProvidersPolicy::price(const std::string& model) const {
  for (const auto& [pat, price] : prices) {
    if (glob_match(pat, model)) return price;
  }
  return std::nullopt;
}

const ProviderEntry& ProvidersPolicy::provider(const std::string& name) const {
  auto it = providers.find(name);
  if (it == providers.end()) {
    std::string known;
    for (const auto& [n, e] : providers)
      known += (known.empty() ? "" : ", ") + n;
    throw Error("unknown provider " + quote(name) + " (known: " + known + ")");
  }
  return it->second;
}

double cost_usd(const Price& p, long input_tokens, long output_tokens) {
  return (static_cast<double>(input_tokens) * p.input_per_mtok +
          static_cast<double>(output_tokens) * p.output_per_mtok) /
         1e6;
}

}  // namespace kd::agents
