#include "contract/chips.h"

#include <nlohmann/json.hpp>
#include <set>

#include "common/errors.h"
#include "common/files.h"
#include "common/policy_path.h"

namespace kd::contract {
namespace {

const std::set<std::string> kKinds = {"tpu", "gpu", "cpu"};

}  // namespace

const Chip* ChipInventory::find(const std::string& id) const {
  for (const auto& c : chips) {
    if (c.id == id) return &c;
  }
  return nullptr;
}

std::vector<std::string> ChipInventory::ids() const {
  std::vector<std::string> out;
  for (const auto& c : chips)
    out.push_back(c.id);
  return out;
}

ChipInventory parse_chip_inventory(const std::string& json_text,
                                   const std::filesystem::path& source) {
  const std::string file = source.filename().string();
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::parse_error& e) {
    throw Error(file + ": not JSON: " + e.what());
  }
  if (!doc.is_object() || !doc.contains("chips") || !doc["chips"].is_array()) {
    throw Error(file + ": expected an object with a \"chips\" array");
  }
  ChipInventory inv;
  inv.source = source;
  std::set<std::string> seen_ids, seen_locks;
  const auto& arr = doc["chips"];
  for (size_t i = 0; i < arr.size(); ++i) {
    const auto& j = arr[i];
    std::string where = file + ": chips[" + std::to_string(i) + "]";
    if (!j.is_object()) throw Error(where + " must be an object");
    for (const auto& [key, _] : j.items()) {
      if (key != "id" && key != "kind" && key != "lock" && key != "env" && key != "devices") {
        throw Error(where + ": unknown field \"" + key + "\"");
      }
    }
    Chip c;
    if (!j.contains("id") || !j["id"].is_string() || j["id"].get<std::string>().empty()) {
      throw Error(where + ": \"id\" must be a non-empty string");
    }
    c.id = j["id"];
    where += " (id \"" + c.id + "\")";
    if (!seen_ids.insert(c.id).second) throw Error(where + ": duplicate id");
    c.kind = j.value("kind", "tpu");
    if (!kKinds.count(c.kind))
      throw Error(where + ": kind \"" + c.kind + "\" is not tpu, gpu or cpu");
    c.lock = j.contains("lock") ? j["lock"].get<std::string>() : "/tmp/tpu-chip-" + c.id + ".lock";
    if (!c.lock.is_absolute()) throw Error(where + ": lock must be an absolute path");
    if (!seen_locks.insert(c.lock.string()).second)
      throw Error(where + ": lock file shared with another chip");
    if (j.contains("env")) {
      if (!j["env"].is_object()) throw Error(where + ": env must be an object of strings");
      for (const auto& [k, v] : j["env"].items()) {
        if (!v.is_string()) throw Error(where + ": env." + k + " must be a string");
        c.env[k] = v.get<std::string>();
      }
    }
    if (j.contains("devices")) {
      if (!j["devices"].is_array()) throw Error(where + ": devices must be an array of paths");
      for (size_t d = 0; d < j["devices"].size(); ++d) {
        const auto& dev = j["devices"][d];
        if (!dev.is_string() || !std::filesystem::path(dev.get<std::string>()).is_absolute()) {
          throw Error(where + ": devices[" + std::to_string(d) + "] must be an absolute path");
        }
        c.devices.emplace_back(dev.get<std::string>());
      }
    }
    inv.chips.push_back(std::move(c));
  }
  return inv;
}

ChipInventory load_chip_inventory(const std::filesystem::path& path) {
  return parse_chip_inventory(read_file(path), path);
}

ChipInventory load_chip_inventory_or_default(const std::optional<std::filesystem::path>& path) {
  return load_chip_inventory(path ? *path : policy_file("chips.json"));
}

}  // namespace kd::contract
