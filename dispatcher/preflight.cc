#include "dispatcher/preflight.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <map>

#include "agents/fake/script.h"
#include "agents/providers_policy.h"
#include "briefs/brief.h"
#include "common/policy_path.h"
#include "contract/chips.h"
#include "contract/run_record.h"
#include "dispatcher/slurm_client.h"
#include "sandbox/profile.h"
#include "verify/verify_command.h"

namespace kd::dispatcher {
namespace {

namespace fs = std::filesystem;

class Checker {
 public:
  explicit Checker(PreflightReport& r) : r_(r) {}

  // Runs `check`; a kd::Error (or any exception) it throws is a problem prefixed with `what`.
  template <typename F>
  bool run(const std::string& what, F&& check) {
    try {
      check();
      return true;
    } catch (const std::exception& e) {
      problem(what + ": " + e.what());
      return false;
    }
  }
  void problem(const std::string& p) { r_.problems.push_back(p); }
  void ok(const std::string& c) { r_.checks.push_back(c); }

 private:
  PreflightReport& r_;
};

// The nearest existing ancestor of `p` must be a writable directory for `p` to be made.
std::optional<std::string> creatable_dir(const fs::path& p) {
  std::error_code ec;
  fs::path abs = fs::absolute(p, ec);
  if (ec) return "cannot be resolved: " + ec.message();
  for (fs::path at = abs;; at = at.parent_path()) {
    if (fs::exists(at, ec)) {
      if (!fs::is_directory(at, ec)) return quote(at.string()) + " exists and is not a directory";
      if (::access(at.c_str(), W_OK | X_OK) != 0)
        return quote(at.string()) + " is not writable: " + errno_name(errno);
      return std::nullopt;
    }
    if (at == at.parent_path()) return "no part of it exists";
  }
}

// Where the verifier box looks for a bare program name: the tool dirs, then the box's PATH.
bool on_box_path(const std::string& program, const std::vector<fs::path>& tool_dirs) {
  std::vector<fs::path> dirs(tool_dirs.begin(), tool_dirs.end());
  for (const char* d : {"/usr/local/bin", "/usr/bin", "/bin"})
    dirs.emplace_back(d);
  for (const auto& d : dirs)
    if (::access((d / program).c_str(), X_OK) == 0) return true;
  return false;
}

void check_verify_command(Checker& c, const std::string& tmpl, const std::string& whose,
                          const std::vector<fs::path>& tool_dirs) {
  const std::map<std::string, std::string> sample = {
      {"reference", "/r"}, {"candidate", "/c"}, {"mode", "full"},       {"family", "f"},
      {"bar", "1"},        {"claim", "1"},      {"artifact_dir", "/a"}, {"receipt", "/a/r"}};
  std::vector<std::string> argv;
  if (!c.run("verify command of " + whose,
             [&] { argv = verify::expand_verify_command(tmpl, sample); }))
    return;
  if (argv.empty()) {
    c.problem("verify command of " + whose + " is empty");
    return;
  }
  const std::string& program = argv[0];
  if (program.find('/') == std::string::npos) {
    if (!on_box_path(program, tool_dirs)) {
      c.problem("verify command of " + whose + ": program " + quote(program) +
                " is on neither a --tool-dir nor the verifier box's PATH "
                "(/usr/local/bin:/usr/bin:/bin)");
      return;
    }
  } else if (fs::path(program).is_absolute() && ::access(program.c_str(), X_OK) != 0) {
    c.problem("verify command of " + whose + ": program " + quote(program) +
              " is not an executable file");
    return;
  }
  c.ok("verify command of " + whose + ": " + program);
}

void check_model(Checker& c, const agents::ModelConfig& m, const agents::Budgets& b) {
  agents::ProvidersPolicy policy;
  if (!c.run("policy providers.json",
             [&] { policy = agents::ProvidersPolicy::load(policy_file("providers.json")); }))
    return;
  const agents::ProviderEntry* entry = nullptr;
  if (!c.run("provider", [&] { entry = &policy.provider(m.provider); })) return;
  const std::string model = m.model.empty() ? entry->default_model : m.model;
  if (m.provider == "fake") {
    if (m.script.empty())
      c.problem("--provider fake needs --script FILE");
    else if (c.run("script", [&] { agents::FakeScript::load(m.script); }))
      c.ok("script " + m.script);
  } else if (!entry->key_env.empty() && m.base_url.empty()) {
    const char* key = std::getenv(entry->key_env.c_str());
    if (!key || !*key)
      c.problem(entry->key_env + " is not set (needed for --provider " + m.provider + ")");
    else
      c.ok("API key in " + entry->key_env);
  }
  if (b.max_cost_usd > 0 && !policy.price(model)) {
    c.problem("no price for model " + quote(model) +
              " in providers.json: a cost budget cannot be enforced without one (add a price, "
              "or pass --max-cost 0 for no cost budget)");
  } else {
    c.ok("provider " + m.provider + ", model " + model);
  }
}

void check_chips(Checker& c, const std::optional<fs::path>& path) {
  contract::ChipInventory inv;
  if (!c.run("chip inventory", [&] { inv = contract::load_chip_inventory_or_default(path); }))
    return;
  if (inv.slurm) {
    // The cluster answers and its partition has the GRES; whether the nodes see the run root is
    // the first job's check.
    const contract::SlurmInventory& s = *inv.slurm;
    slurm::Client::Partition p;
    if (!c.run("Slurm partition " + s.partition, [&] {
          p = slurm::Client(slurm::ClientOptions{s.env, std::chrono::milliseconds(10000)})
                  .partition(s.partition);
        }))
      return;
    const auto gres = p.gres_per_node.find(s.gres_name);
    if (gres == p.gres_per_node.end() || gres->second < 1) {
      c.problem("chip inventory " + inv.source.string() + ": Slurm partition " + s.partition +
                " has no GRES " + s.gres_name + " on its nodes");
      return;
    }
    c.ok("chip inventory " + inv.source.string() + ": Slurm partition " + s.partition + ", " +
         std::to_string(p.nodes) + " nodes with " + std::to_string(gres->second) + " x " +
         s.gres_name);
    return;
  }
  if (inv.chips.empty()) c.problem("chip inventory " + inv.source.string() + " has no chip");
  bool good = true;
  for (const auto& chip : inv.chips) {
    const std::string who = "chip " + chip.id + " (" + chip.kind + ") of " + inv.source.string();
    if (auto why = creatable_dir(chip.lock.parent_path())) {
      c.problem(who + ": its lock " + quote(chip.lock.string()) + " cannot be made: " + *why);
      good = false;
    }
    for (const auto& dev : chip.devices) {
      if (!fs::exists(dev)) {
        c.problem(who + ": device " + dev.string() +
                  " does not exist on this host (name this host's chips with --chips FILE)");
        good = false;
      }
    }
  }
  if (good)
    c.ok("chip inventory " + inv.source.string() + ": " + std::to_string(inv.chips.size()) +
         " chips");
}

}  // namespace

PreflightFailed::PreflightFailed(const PreflightReport& r)
    : InputError([&] {
        std::string m = "refused before dispatch: " + std::to_string(r.problems.size()) +
                        (r.problems.size() == 1 ? " problem" : " problems");
        for (const auto& p : r.problems)
          m += "\n  - " + p;
        return m;
      }()) {}

PreflightReport preflight(const PreflightInput& in) {
  PreflightReport r;
  Checker c(r);
  for (const char* profile : {"author", "verifier"}) {
    if ((profile[0] == 'a' ? in.author : in.verify) &&
        c.run(std::string("sandbox profile ") + profile, [&] { sandbox::load_profile(profile); }))
      c.ok(std::string("sandbox profile ") + profile);
  }
  if (in.model) check_model(c, *in.model, in.budgets);
  for (const auto& d : in.tool_dirs) {
    if (!fs::is_directory(d))
      c.problem("--tool-dir " + quote(d.string()) + " is not a directory");
    else
      c.ok("tool dir " + d.string());
  }
  if (in.run_root) {
    if (auto why = creatable_dir(*in.run_root))
      c.problem("--run-root " + quote(in.run_root->string()) + " cannot be made: " + *why);
    else
      c.ok("run root " + in.run_root->string());
  }
  if (in.verify && in.verify_cmd)
    check_verify_command(c,
                         verify::external_verify_template(*in.verify_cmd).value_or(*in.verify_cmd),
                         "--verify-cmd", in.tool_dirs);

  // The experiments: each brief must build (the same checks the dispatch makes).
  std::vector<std::pair<std::string, std::string>> experiments;
  std::optional<fs::path> wiki = in.wiki;
  std::optional<fs::path> chips = in.chips;
  if (in.run_dir) {
    contract::RunRecord run;
    if (c.run("run " + quote(in.run_dir->string()),
              [&] { run = contract::RunRecord::load(fs::absolute(*in.run_dir)); })) {
      wiki = run.wiki;
      experiments.emplace_back(run.family, run.experiment);
      if (!chips && !run.chips.empty()) chips = fs::path(run.chips);  // the author phase's
    }
  } else if (in.wiki && !fs::is_directory(*in.wiki)) {
    c.problem("--wiki " + quote(in.wiki->string()) + " is not a directory");
    wiki.reset();
  } else if (in.experiment) {
    experiments.push_back(*in.experiment);
  } else if (in.wiki) {
    if (c.run("queue", [&] { r.queue = briefs::in_progress_experiments(*in.wiki, in.families); })) {
      for (const auto& q : r.queue) {
        if (!q.problem.empty())
          c.problem(q.family + "/" + q.experiment + ": " + q.problem);
        else
          experiments.emplace_back(q.family, q.experiment);
      }
    }
  }
  check_chips(c, chips);
  if (!wiki) return r;
  for (const auto& [family, experiment] : experiments) {
    const std::string key = family + "/" + experiment;
    briefs::BriefOutcome bo = briefs::build_brief({*wiki, family, experiment, chips, {}});
    if (!bo.brief) {
      for (const auto& p : bo.problems)
        c.problem("brief of " + key + " is refused: " + p.item + ": " + p.reason);
      continue;
    }
    c.ok("brief of " + key);
    if (in.verify && !in.verify_cmd) {
      // No tool named: kdispatch measures, with its worker program.
      if (auto tmpl = verify::external_verify_template(bo.brief->binding.verify_command))
        check_verify_command(c, *tmpl, "the binding of " + family, in.tool_dirs);
      else if (!fs::is_regular_file(workers_dir() / "kd-pyworker"))
        c.problem("the measuring parent's worker " +
                  quote((workers_dir() / "kd-pyworker").string()) +
                  " is missing (set KDISPATCH_WORKERS_DIR or install kdispatch)");
      else
        c.ok("measuring parent's worker");
    }
  }
  return r;
}

}  // namespace kd::dispatcher
