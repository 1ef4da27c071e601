#include "agents/providers_policy.h"

#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "common/files.h"
#include "common/glob.h"
#include "common/json_read.h"

namespace kd::agents {

namespace {

using json = nlohmann::json;

ProviderEntry provider_entry(const JsonObjectReader& policy, const std::string& name,
                             const json& e) {
  auto field = [&](const char* k) {
    if (!e.is_object() || !e.contains(k) || !e[k].is_string())
      policy.error("providers." + name + "." + k + " must be a string");
    return e[k].get<std::string>();
  };
  ProviderEntry pe{field("wire"), field("base_url"), field("key_env"), field("default_model")};
  JsonObjectReader(e, policy.where() + ": providers." + name)
      .allow_only({"wire", "base_url", "key_env", "default_model"});
  if (pe.wire != "anthropic" && pe.wire != "openai") {
    policy.error("providers." + name + ".wire must be anthropic or openai, not " + quote(pe.wire));
  }
  return pe;
}

std::pair<std::string, Price> price_row(const JsonObjectReader& policy, const json& e, size_t i) {
  const std::string at = "prices_usd_per_mtok[" + std::to_string(i) + "]";
  if (!e.is_object() || !e.contains("model") || !e["model"].is_string() || !e.contains("input") ||
      !e["input"].is_number() || !e.contains("output") || !e["output"].is_number()) {
    policy.error(at + " needs model (string), input and output (numbers, USD per million tokens)");
  }
  JsonObjectReader row(e, policy.where() + ": " + at);
  row.allow_only({"model", "input", "output"});
  double in = e["input"], out = e["output"];
  if (in < 0 || out < 0) row.error("prices must not be negative");
  return {e["model"].get<std::string>(), Price{in, out}};
}

}  // namespace

ProvidersPolicy ProvidersPolicy::load(const std::filesystem::path& path) {
  const std::string where = path.string();
  json j = json::parse(read_file(path), nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw Error(where + ": not a JSON object");
  JsonObjectReader r(j, where);
  r.allow_only({"providers", "prices_usd_per_mtok"});
  if (!r.has("providers") || !r.at("providers").is_object()) r.error("no \"providers\" object");
  ProvidersPolicy p;
  for (const auto& [name, e] : r.at("providers").items())
    p.providers[name] = provider_entry(r, name, e);
  if (!r.has("prices_usd_per_mtok") || !r.at("prices_usd_per_mtok").is_array())
    r.error("no \"prices_usd_per_mtok\" array");
  const json& prices = r.at("prices_usd_per_mtok");
  for (size_t i = 0; i < prices.size(); ++i)
    p.prices.push_back(price_row(r, prices[i], i));
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
