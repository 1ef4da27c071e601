// Feeds arbitrary bytes to the JSON skimmer: it must never crash, and on every line a full JSON
// parse reads as an object, each string it reports for a key is the one the full parse holds
// there (so a record skipped from a skim is the record the full parse would have seen).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "audit/json_skim.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  // The keys the importers ask for, and whatever keys the line itself has.
  std::vector<std::string> keys = {"type", "cwd", "payload", "timestamp"};
  nlohmann::json full = nlohmann::json::parse(line, nullptr, false);
  if (full.is_object())
    for (const auto& item : full.items())
      if (keys.size() < 12) keys.push_back(item.key());
  std::vector<kd::audit::SkimField> fields;
  for (const auto& k : keys)
    fields.push_back({k, {}});
  const bool skimmed = kd::audit::skim_object(line, fields.data(), fields.size());
  if (!skimmed || !full.is_object()) return 0;
  for (const auto& f : fields) {
    if (!f.value) continue;
    auto it = full.find(std::string(f.key));
    if (it == full.end() || !it->is_string()) std::abort();
    // The skim keeps escapes; decoding its body must give the full parse's string.
    nlohmann::json body =
        nlohmann::json::parse("\"" + std::string(*f.value) + "\"", nullptr, false);
    if (!body.is_string() || body.get<std::string>() != it->get<std::string>()) std::abort();
  }
  return 0;
}
