// The chip inventory (docs/dispatcher.md): policies/chips.json or --chips FILE.
//   {"chips": [{"id": "0", "kind": "tpu", "lock": "/tmp/tpu-chip-0.lock",
//               "env": {"TPU_VISIBLE_DEVICES": "0"}, "devices": ["/dev/accel0"]}, ...]}
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kd::contract {

struct Chip {
  std::string id;
  std::string kind;                            // tpu | gpu | cpu
  std::filesystem::path lock;                  // flock(2) target; default /tmp/tpu-chip-<id>.lock
  std::map<std::string, std::string> env;      // set for runs on this chip
  std::vector<std::filesystem::path> devices;  // device nodes exposed to those runs only
};

struct ChipInventory {
  std::vector<Chip> chips;
  std::filesystem::path source;

  const Chip* find(const std::string& id) const;
  std::vector<std::string> ids() const;
};

// Parses and validates an inventory; throws kd::Error naming the file, the chip and the field
// ("chips.json: chips[1] (id \"3\"): devices[0] must be an absolute path").
ChipInventory parse_chip_inventory(const std::string& json_text,
                                   const std::filesystem::path& source);
ChipInventory load_chip_inventory(const std::filesystem::path& path);

// --chips FILE when given, else the default policies/chips.json.
ChipInventory load_chip_inventory_or_default(const std::optional<std::filesystem::path>& path);

}  // namespace kd::contract
