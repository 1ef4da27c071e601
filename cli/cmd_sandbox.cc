// kdispatch sandbox exec: one command in a fresh sandbox (docs/sandbox.md, docs/architecture.md).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cli/args.h"
#include "cli/commands.h"
#include "common/errors.h"
#include "common/exit_codes.h"
#include "contract/chips.h"
#include "sandbox/box.h"

namespace kd::cli {
namespace {

double parse_timeout(const std::string& s) {
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || !(v > 0) || v > 86400) {
    throw UsageError("--timeout: expected seconds in (0, 86400], got " + quote(s));
  }
  return v;
}

int exec(const Args& args) {
  const ParsedArgs a = parse_args(args, {{"worktree"},
                                         {"profile"},
                                         {"ro", true, true},
                                         {"mask", true, true},
                                         {"chip"},
                                         {"chips"},
                                         {"timeout"},
                                         {"json", false}});
  if (!a.positional.empty())
    throw UsageError("unexpected argument " + quote(a.positional[0]) +
                     " (the command goes after --)");
  if (a.rest.empty()) throw UsageError("missing the command after --");
  sandbox::RunRequest req;
  req.argv = a.rest;
  if (a.has("timeout")) req.timeout_s = parse_timeout(a.get("timeout"));
  const bool json = a.has("json");
  try {
    sandbox::BoxSpec spec;
    spec.worktree = a.required("worktree");
    spec.profile = sandbox::load_profile(a.get("profile", "author"));
    for (const auto& p : a.all("ro"))
      spec.ro.emplace_back(p);
    for (const auto& p : a.all("mask"))
      spec.mask.emplace_back(p);
    if (a.has("chip")) {
      std::optional<std::filesystem::path> chips;
      if (a.has("chips")) chips = a.get("chips");
      const contract::ChipInventory inv = contract::load_chip_inventory_or_default(chips);
      const contract::Chip* chip = inv.find(a.get("chip"));
      if (!chip) throw Error("chip " + quote(a.get("chip")) + " is not in " + inv.source.string());
      spec.chip = *chip;
      req.use_chip = true;
    } else if (a.has("chips")) {
      throw UsageError("--chips needs --chip");
    }
    const sandbox::RunResult r = sandbox::exec_once(spec, req);
    if (json) {
      std::printf("%s\n", r.to_json().dump().c_str());
    } else {
      std::fwrite(r.out.data(), 1, r.out.size(), stdout);
      std::fwrite(r.err.data(), 1, r.err.size(), stderr);
      for (const auto& d : r.denials) {
        std::fprintf(stderr, "kdispatch sandbox: %s: %s\n", d.layer.c_str(), d.detail.c_str());
      }
    }
    if (r.signal != 0) return 128 + r.signal;
    return r.exit_code;
  } catch (const Error& e) {
    if (json) {
      std::printf("%s\n", nlohmann::json{{"refused", e.what()}}.dump().c_str());
    }
    std::fprintf(stderr, "kdispatch sandbox: refused: %s\n", e.what());
    return kExitRefused;
  }
}

}  // namespace

int cmd_sandbox(const Args& args) {
  if (args.empty() || args[0] != "exec") throw UsageError("expected the subcommand \"exec\"");
  return exec(Args(args.begin() + 1, args.end()));
}

}  // namespace kd::cli
