#include "contract/chips.h"

#include <set>

#include "common/errors.h"
#include "common/files.h"
#include "common/json_read.h"
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
  const nlohmann::json doc = parse_json_document(json_text, file);
  if (!doc.is_object() || !doc.contains("chips") || !doc["chips"].is_array())
    throw Error(file + ": expected an object with a \"chips\" array");
  JsonObjectReader top(doc, file);
  top.allow_only({"chips"});
  ChipInventory inv;
  inv.source = source;
  std::set<std::string> seen_ids, seen_locks;
  for (const JsonObjectReader& j : top.objects("chips")) {
    j.allow_only({"id", "kind", "lock", "env", "devices"});
    if (!j.has("id")) j.field_error("id", "must be a non-empty string");
    Chip c;
    c.id = j.string("id");
    // From here on, messages name the chip by its id as well as its place.
    const JsonObjectReader chip(j.raw(), j.where() + " (id " + quote(c.id) + ")");
    if (!seen_ids.insert(c.id).second) chip.error("duplicate id");
    c.kind = chip.string_or("kind", "tpu");
    if (!kKinds.count(c.kind)) chip.error("kind " + quote(c.kind) + " is not tpu, gpu or cpu");
    c.lock = chip.has("lock") ? chip.absolute_path("lock")
                              : std::filesystem::path("/tmp/tpu-chip-" + c.id + ".lock");
    if (!seen_locks.insert(c.lock.string()).second)
      chip.error("lock file shared with another chip");
    c.env = chip.string_map("env");
    const std::vector<std::string> devices = chip.strings("devices", true);
    for (size_t d = 0; d < devices.size(); ++d) {
      if (!std::filesystem::path(devices[d]).is_absolute())
        chip.error("devices[" + std::to_string(d) + "] must be an absolute path");
      c.devices.emplace_back(devices[d]);
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
