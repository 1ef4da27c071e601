#include "dispatcher/chip_job.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "common/errors.h"
#include "common/files.h"
#include "common/json_read.h"
#include "common/text.h"
#include "common/time.h"
#include "sandbox/box_spec_json.h"
#include "verify/measure_job.h"

namespace kd::dispatcher {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= s.size()) {
    const size_t comma = s.find(',', pos);
    const std::string item(trim(s.substr(pos, comma == std::string::npos ? comma : comma - pos)));
    if (!item.empty()) out.push_back(item);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

std::string replace_index(std::string s, const std::string& index) {
  for (size_t at = s.find("{index}"); at != std::string::npos; at = s.find("{index}", at))
    s.replace(at, 7, index);
  return s;
}

// The chips Slurm gave this job, as "<node>:<index>", from the variables it sets in a batch step
// (or a step's), else the one a TaskProlog exported under the inventory's name.
std::vector<std::string> given_chips(const ChipJobFile& f, const std::string& node) {
  std::string ids =
      env_or("SLURM_STEP_GPUS", env_or("SLURM_JOB_GPUS", env_or(f.chip_env.c_str(), "")));
  std::vector<std::string> out;
  for (const auto& index : split_commas(ids))
    out.push_back(node + ":" + index);
  return out;
}

// A declined try keeps its chip until the dispatcher's next try has one of its own (that try
// creates the hold file as it starts), or until its bound: otherwise Slurm, which cannot exclude
// one GRES index, would give the next try the same chip again.
void hold_declined_chip(const ChipJobFile& f) {
  const auto until =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(f.hold_at_most_s);
  std::error_code ec;
  while (!fs::exists(f.hold_file, ec) && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
}

}  // namespace

std::string shared_storage_message(const std::string& node, const fs::path& path) {
  return "the node " + node + " does not see " + path.string() +
         ": kdispatch on Slurm needs the run root on storage every node sees";
}

json chip_job_json(const ChipJobFile& f) {
  json j = {{"experiment", f.experiment}, {"purpose", f.purpose}, {"chip_env", f.chip_env},
            {"chip_kind", f.chip_kind},   {"devices", f.devices}, {"avoid_chip", f.avoid_chip},
            {"result", f.result}};
  // A box command, unless the work is the measuring parent's alone.
  if (!f.job.request.argv.empty()) {
    j["box"] = sandbox::box_spec_json(f.job.spec);
    j["request"] = sandbox::run_request_json(f.job.request);
  }
  if (f.job.measure) j["measure"] = verify::measure_job_json(*f.job.measure);
  if (f.marker) j["marker"] = {{"path", *f.marker}, {"token", f.marker_token}};
  if (f.decline_avoided) {
    j["decline_avoided"] = true;
    j["hold"] = {{"file", f.hold_file}, {"at_most_s", f.hold_at_most_s}};
  }
  if (!f.releases.empty()) j["releases"] = f.releases;
  return j;
}

ChipJobFile chip_job_from_json(const json& j, const std::string& where) {
  JsonObjectReader r(j, where);
  r.allow_only({"experiment", "purpose", "box", "request", "chip_env", "chip_kind", "devices",
                "avoid_chip", "decline_avoided", "hold", "releases", "result", "measure",
                "marker"});
  ChipJobFile f;
  f.experiment = r.string("experiment");
  f.purpose = r.choice("purpose", {"run_on_chip", "verify"});
  if (r.has("box") || r.has("request")) {
    f.job.spec = sandbox::box_spec_from_json(r.at("box"), where + ": box");
    f.job.request = sandbox::run_request_from_json(r.at("request"), where + ": request");
  }
  f.chip_env = r.string("chip_env");
  f.chip_kind = r.choice("chip_kind", {"tpu", "gpu", "cpu"});
  f.devices = r.strings("devices", true);
  f.avoid_chip = r.raw().value("avoid_chip", "");
  f.decline_avoided = r.boolean_or("decline_avoided", false);
  if (f.decline_avoided && f.avoid_chip.empty())
    throw Error(where + ": decline_avoided needs avoid_chip");
  if (f.decline_avoided != r.has("hold"))
    throw Error(where + ": decline_avoided and hold go together");
  if (r.has("hold")) {
    JsonObjectReader h = r.object("hold");
    f.hold_file = h.absolute_path("file");
    f.hold_at_most_s = h.number("at_most_s", 0, 86400);
  }
  for (const auto& path : r.strings("releases", true)) {
    if (!fs::path(path).is_absolute())
      r.field_error("releases", "holds " + quote(path) + ", not an absolute path");
    f.releases.emplace_back(path);
  }
  f.result = r.absolute_path("result");
  if (r.has("measure"))
    f.job.measure = verify::measure_job_from_json(r.at("measure"), where + ": measure");
  if (r.has("marker")) {
    JsonObjectReader m = r.object("marker");
    f.marker = m.absolute_path("path");
    f.marker_token = m.string("token");
  }
  return f;
}

json chip_job_result_json(const ChipJobResult& r) {
  json j = {{"chip", r.chip},
            {"given", r.given},
            {"result", r.run.result.to_json()},
            {"duration_s", r.duration_s},
            {"started_at", r.started_at},
            {"finished_at", r.finished_at},
            {"error", r.error}};
  if (r.declined) j["declined"] = true;
  if (r.run.parent) j["parent"] = verify::parent_measurement_json(*r.run.parent);
  return j;
}

ChipJobResult chip_job_result_from_json(const json& j, const std::string& where) {
  JsonObjectReader r(j, where);
  r.allow_only({"chip", "given", "result", "duration_s", "started_at", "finished_at", "error",
                "declined", "parent"});
  ChipJobResult out;
  out.error = r.raw().value("error", "");
  out.chip = r.raw().value("chip", "");
  out.given = r.strings("given", true);
  out.started_at = r.raw().value("started_at", "");
  out.finished_at = r.raw().value("finished_at", "");
  out.duration_s = r.number("duration_s", 0, 1e9);
  out.declined = r.boolean_or("declined", false);
  if (!out.error.empty() || out.declined) return out;
  out.run.chip = out.chip;
  out.run.result = sandbox::run_result_from_json(r.at("result"), where + ": result");
  if (r.has("parent"))
    out.run.parent = verify::parent_measurement_from_json(r.at("parent"), where + ": parent");
  return out;
}

int run_chip_job_file(const fs::path& job_file) {
  const auto t0 = std::chrono::steady_clock::now();
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  const std::string node = env_or("SLURMD_NODENAME", host);
  ChipJobFile f;
  try {
    f = chip_job_from_json(parse_json_document(read_file(job_file), job_file.string()),
                           job_file.string());
  } catch (const Error& e) {
    // A job file the node cannot read: either storage it does not see, or a broken file.
    std::fprintf(stderr, "kdispatch chip-job: %s\n",
                 fs::exists(job_file)
                     ? e.what()
                     : shared_storage_message(node, job_file.parent_path()).c_str());
    return 1;
  }
  ChipJobResult out;
  out.started_at = utc_now_rfc3339();
  auto finish = [&]() {
    out.finished_at = utc_now_rfc3339();
    out.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    write_file_atomic(f.result, chip_job_result_json(out).dump(2) + "\n");
  };
  try {
    if (f.marker) {
      std::string seen;
      try {
        seen = std::string(trim(read_file(*f.marker)));
      } catch (const Error&) {
      }
      if (seen != f.marker_token) {
        // The result goes where the dispatcher looks, in case only the marker is missing.
        out.error = shared_storage_message(node, f.marker->parent_path());
        std::fprintf(stderr, "kdispatch chip-job: %s\n", out.error.c_str());
        try {
          finish();
        } catch (const Error&) {
        }
        return 1;
      }
    }
    // This job has its chip: earlier declined tries of the same work may give theirs back.
    for (const auto& held : f.releases) {
      try {
        write_file_atomic(held, "");
      } catch (const Error& e) {
        std::fprintf(stderr, "kdispatch chip-job: a declined try keeps its chip to its bound: %s\n",
                     e.what());
      }
    }
    out.given = given_chips(f, node);
    if (out.given.empty())
      throw Error("Slurm gave this job no chip: none of SLURM_STEP_GPUS, SLURM_JOB_GPUS, " +
                  f.chip_env + " is set (does the partition's GRES export an index?)");
    const auto other = std::find_if(out.given.begin(), out.given.end(),
                                    [&](const std::string& c) { return c != f.avoid_chip; });
    if (other == out.given.end() && f.decline_avoided) {
      out.declined = true;
      std::fprintf(stderr, "kdispatch chip-job: given only %s, the author's last chip: declined\n",
                   f.avoid_chip.c_str());
      finish();
      hold_declined_chip(f);
      return 0;
    }
    out.chip = other != out.given.end() ? *other : out.given.front();
    const std::string index = out.chip.substr(out.chip.rfind(':') + 1);
    contract::Chip chip{out.chip, f.chip_kind, "", {{f.chip_env, index}}, {}};
    for (const auto& d : f.devices)
      chip.devices.emplace_back(replace_index(d, index));
    out.run = verify::run_chip_job_on(f.job, chip);
  } catch (const Error& e) {
    out.error = e.what();
  }
  finish();
  if (!out.error.empty()) std::fprintf(stderr, "kdispatch chip-job: %s\n", out.error.c_str());
  return out.error.empty() ? 0 : 1;
}

}  // namespace kd::dispatcher
