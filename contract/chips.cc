#include "contract/chips.h"

#include <cctype>
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

Chip ChipInventory::slurm_chip() const {
  if (!slurm) throw Error("the inventory " + source.string() + " is not a Slurm inventory");
  return Chip{"slurm:" + slurm->partition, slurm->kind, {}, {}, {}};
}

namespace {

// "name[:type]:count" with count 1: one chip per job (a job asking for more says so itself).
void split_gres(const JsonObjectReader& top, SlurmInventory& s) {
  const size_t colon = s.gres.rfind(':');
  if (colon == std::string::npos || colon == 0 || s.gres.substr(colon + 1) != "1")
    top.field_error("gres", "must name one chip as sbatch --gres takes it (\"gpu:tpu:1\")");
  s.gres_name = s.gres.substr(0, colon);
}

bool is_env_name(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

ChipInventory parse_slurm_inventory(const JsonObjectReader& top,
                                    const std::filesystem::path& source) {
  top.allow_only({"scheduler", "partition", "gres", "chip_env", "kind", "devices",
                  "poll_interval_s", "time_limit_minutes", "sbatch_args", "job_dir", "env",
                  "kdispatch", "parallel"});
  SlurmInventory s;
  s.partition = top.string("partition");
  s.gres = top.string("gres");
  split_gres(top, s);
  s.chip_env = top.string("chip_env");
  if (!is_env_name(s.chip_env)) top.field_error("chip_env", "must be an environment variable name");
  s.kind = top.string_or("kind", s.kind);
  if (!kKinds.count(s.kind)) top.error("kind " + quote(s.kind) + " is not tpu, gpu or cpu");
  s.devices = top.strings("devices", true);
  for (size_t d = 0; d < s.devices.size(); ++d) {
    if (!std::filesystem::path(s.devices[d]).is_absolute())
      top.error("devices[" + std::to_string(d) + "] must be an absolute path");
  }
  s.poll_interval_s = top.number_or("poll_interval_s", 0.05, 600, s.poll_interval_s);
  if (top.has("time_limit_minutes"))
    s.time_limit_minutes = static_cast<int>(top.count_in("time_limit_minutes", 1, 525600));
  s.sbatch_args = top.strings("sbatch_args", true);
  s.job_dir = top.string_or("job_dir", s.job_dir);
  const std::filesystem::path job_dir(s.job_dir);
  if (job_dir.is_absolute() || job_dir.lexically_normal().string().rfind("..", 0) == 0)
    top.field_error("job_dir", "must be a relative path beneath the run directory");
  s.env = top.string_map("env");
  if (top.has("kdispatch")) s.kdispatch = top.absolute_path("kdispatch");
  s.parallel = static_cast<int>(top.count_or("parallel", 4096, 0));
  ChipInventory inv;
  inv.source = source;
  inv.slurm = std::move(s);
  return inv;
}

}  // namespace

ChipInventory parse_chip_inventory(const std::string& json_text,
                                   const std::filesystem::path& source) {
  const std::string file = source.filename().string();
  const nlohmann::json doc = parse_json_document(json_text, file);
  if (doc.is_object() && doc.contains("scheduler")) {
    JsonObjectReader top(doc, file);
    const std::string scheduler = top.choice("scheduler", {"local", "slurm"});
    if (scheduler == "slurm") return parse_slurm_inventory(top, source);
  }
  if (!doc.is_object() || !doc.contains("chips") || !doc["chips"].is_array())
    throw Error(file + ": expected an object with a \"chips\" array");
  JsonObjectReader top(doc, file);
  top.allow_only({"scheduler", "chips"});
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
