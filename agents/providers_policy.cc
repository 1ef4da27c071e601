#include "agents/providers_policy.h"

#include <algorithm>
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
      .allow_only({"wire", "base_url", "key_env", "default_model", "prompt_cache_key"});
  if (e.contains("prompt_cache_key")) {
    if (!e["prompt_cache_key"].is_boolean())
      policy.error("providers." + name + ".prompt_cache_key must be true or false");
    pe.prompt_cache_key = e["prompt_cache_key"].get<bool>();
  }
  if (pe.wire != "anthropic" && pe.wire != "openai") {
    policy.error("providers." + name + ".wire must be anthropic or openai, not " + quote(pe.wire));
  }
  return pe;
}

long non_negative_integer(const JsonObjectReader& r, const json& e, const char* key) {
  if (!e.contains(key) || !e[key].is_number_integer() || e[key].get<long>() < 0) {
    r.error(std::string(key) + " must be a non-negative integer");
  }
  return e[key].get<long>();
}

ModelEntry model_row(const JsonObjectReader& policy, const json& e, size_t i) {
  const std::string at = "models[" + std::to_string(i) + "]";
  if (!e.is_object() || !e.contains("model") || !e["model"].is_string()) {
    policy.error(at + " needs model (a name pattern)");
  }
  JsonObjectReader row(e, policy.where() + ": " + at);
  row.allow_only({"model", "context_window", "microusd_per_mtok"});
  ModelEntry m;
  m.pattern = e["model"].get<std::string>();
  if (e.contains("context_window"))
    m.context_window = non_negative_integer(row, e, "context_window");
  if (e.contains("microusd_per_mtok")) {
    const json& p = e["microusd_per_mtok"];
    if (!p.is_object()) row.error("microusd_per_mtok must be an object");
    JsonObjectReader prices(p, row.where() + ".microusd_per_mtok");
    prices.allow_only({"input", "output", "cache_write_5m", "cache_write_1h", "cache_read"});
    Price price;
    price.input = non_negative_integer(prices, p, "input");
    price.output = non_negative_integer(prices, p, "output");
    price.cache_write_5m = non_negative_integer(prices, p, "cache_write_5m");
    price.cache_write_1h = non_negative_integer(prices, p, "cache_write_1h");
    price.cache_read = non_negative_integer(prices, p, "cache_read");
    m.price = price;
  }
  return m;
}

// tokens * micro-dollars per MTok, summed, then rounded up once: exact in 64 bits up to
// 9e18, i.e. a hundred million tokens at USD 90'000 per MTok.
long round_up_mtok(long long sum) {
  return static_cast<long>((sum + 999'999) / 1'000'000);
}

}  // namespace

ProvidersPolicy ProvidersPolicy::load(const std::filesystem::path& path) {
  const std::string where = path.string();
  json j = json::parse(read_file(path), nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw Error(where + ": not a JSON object");
  JsonObjectReader r(j, where);
  r.allow_only({"providers", "models"});
  if (!r.has("providers") || !r.at("providers").is_object()) r.error("no \"providers\" object");
  ProvidersPolicy p;
  for (const auto& [name, e] : r.at("providers").items())
    p.providers[name] = provider_entry(r, name, e);
  if (!r.has("models") || !r.at("models").is_array()) r.error("no \"models\" array");
  const json& models = r.at("models");
  for (size_t i = 0; i < models.size(); ++i)
    p.models.push_back(model_row(r, models[i], i));
  return p;
}

const ModelEntry* ProvidersPolicy::model(const std::string& name) const {
  for (const auto& m : models) {
    if (glob_match(m.pattern, name)) return &m;
  }
  return nullptr;
}

std::optional<Price> ProvidersPolicy::price(const std::string& name) const {
  const ModelEntry* m = model(name);
  return m ? m->price : std::nullopt;
}

long ProvidersPolicy::context_window(const std::string& name) const {
  const ModelEntry* m = model(name);
  return m ? m->context_window : 0;
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

long cost_microusd(const Price& p, const Usage& u) {
  long read = u.cache_read_tokens.value_or(0);
  long w5 = u.cache_write_5m_tokens.value_or(0);
  long w1 = u.cache_write_1h_tokens.value_or(0);
  long uncached = std::max(0L, u.input_tokens - read - w5 - w1);
  long long sum =
      static_cast<long long>(uncached) * p.input + static_cast<long long>(w5) * p.cache_write_5m +
      static_cast<long long>(w1) * p.cache_write_1h + static_cast<long long>(read) * p.cache_read +
      static_cast<long long>(u.output_tokens) * p.output;
  return round_up_mtok(sum);
}

long worst_case_microusd(const Price& p, long input_tokens, long max_output_tokens) {
  long dearest = std::max({p.input, p.cache_write_5m, p.cache_write_1h});
  return round_up_mtok(static_cast<long long>(input_tokens) * dearest +
                       static_cast<long long>(max_output_tokens) * p.output);
}

}  // namespace kd::agents
