#include <signal.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/model_args.h"
#include "common/errors.h"
#include "common/exit_codes.h"
#include "common/words.h"
#include "dispatcher/campaign.h"

namespace kd::cli {
namespace {

double number(const ParsedArgs& p, const std::string& name, double fallback) {
  if (!p.has(name)) return fallback;
  try {
    return std::stod(p.get(name));
  } catch (const std::exception&) {
    throw UsageError("--" + name + " needs a number");
  }
}

// SIGINT/SIGTERM: the first stops new dispatches and lets the experiments in flight finish; the
// second stops now. Everything done so far is journalled, so `--resume` continues either way.
class StopSignals {
 public:
  StopSignals() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGINT);
    sigaddset(&set_, SIGTERM);
    // Blocked before any other thread starts, so only the watcher ever receives them.
    pthread_sigmask(SIG_BLOCK, &set_, nullptr);
    watcher_ = std::thread([this] { watch(); });
  }
  ~StopSignals() {
    done_ = true;
    watcher_.join();
    pthread_sigmask(SIG_UNBLOCK, &set_, nullptr);
  }
  const std::atomic<bool>& stop() const { return stop_; }

 private:
  void watch() {
    timespec poll{0, 200'000'000};
    while (!done_) {
      int sig = sigtimedwait(&set_, nullptr, &poll);
      if (sig < 0) continue;
      if (!stop_.exchange(true)) {
        std::fprintf(stderr,
                     "kdispatch run: %s: no new dispatches; the experiments in flight finish "
                     "(signal again to stop now; `kdispatch run --resume` continues)\n",
                     strsignal(sig));
      } else {
        std::fprintf(stderr, "kdispatch run: stopping now; `kdispatch run --resume` continues\n");
        std::_Exit(128 + sig);  // boxes die with their parent; the journal is durable
      }
    }
  }
  sigset_t set_;
  std::atomic<bool> stop_{false}, done_{false};
  std::thread watcher_;
};

}  // namespace

// kdispatch run --wiki DIR [--family SLUG]... [MODEL] [--chips FILE] [--run-root DIR]
//   [--verify-cmd TEMPLATE] [--mode screen|full] [--tool-dir DIR]... [--resume] [--file]
//   [--parallel N] [--status-every S] [--max-turns N] [--max-cost USD] [--max-campaign-cost USD]
//   [--notify-cmd CMD]
int cmd_run(const Args& args) {
  std::vector<OptSpec> specs = {{"wiki"},
                                {"family", true, true},
                                {"chips"},
                                {"run-root"},
                                {"verify-cmd"},
                                {"mode"},
                                {"tool-dir", true, true},
                                {"resume", false},
                                {"file", false},
                                {"parallel"},
                                {"status-every"},
                                {"max-campaign-cost"},
                                {"notify-cmd"}};
  for (auto& s : model_option_specs())
    specs.push_back(s);
  ParsedArgs p = parse_args(args, specs);
  if (!p.positional.empty()) throw UsageError("unexpected argument " + p.positional[0]);
  dispatcher::CampaignOptions o;
  o.wiki = p.required("wiki");
  o.families = p.all("family");
  if (p.has("chips")) o.chips = p.get("chips");
  o.run_root = p.get("run-root", "run-root");
  o.model = model_config(p);
  o.budgets = session_budgets(p);
  o.max_campaign_cost_usd = number(p, "max-campaign-cost", 0);
  if (p.has("verify-cmd")) o.verify_cmd = p.get("verify-cmd");
  o.mode = p.get("mode", "full");
  if (o.mode != "screen" && o.mode != "full") throw UsageError("--mode is screen or full");
  for (const auto& d : p.all("tool-dir"))
    o.tool_dirs.emplace_back(d);
  o.resume = p.has("resume");
  o.file = p.has("file");
  o.parallel = static_cast<int>(number(p, "parallel", 0));
  o.status_interval_s = number(p, "status-every", 15);
  if (p.has("notify-cmd")) {
    try {
      o.notify_cmd = split_words(p.get("notify-cmd"), "--notify-cmd");
    } catch (const Error& e) {
      throw UsageError(e.what());
    }
  }
  o.command_line = "kdispatch run";
  for (const auto& a : args)
    o.command_line += " " + (a.find_first_of(" \t'\"") == std::string::npos ? a : quote(a));

  StopSignals signals;
  dispatcher::CampaignReport r = dispatcher::run_campaign(o, signals.stop());
  bool all_verdicts = true;
  for (const auto& e : r.experiments) {
    std::printf("%-28s %-14s %s\n", e.experiment.c_str(), contract::to_string(e.outcome).c_str(),
                e.earlier ? "(recorded earlier)" : e.run_dir.c_str());
    for (const auto& reason : e.reasons)
      std::printf("    - %s\n", reason.c_str());
    all_verdicts = all_verdicts && e.outcome.is_verdict();
  }
  std::printf("%zu experiments, wall %.1f s, kdispatch cpu %.2f s%s\n", r.experiments.size(),
              r.wall_s, r.cpu_s, r.stopped ? " (stopped: resume with --resume)" : "");
  if (r.experiments.empty()) std::printf("nothing queued: no committed in_progress experiment\n");
  return all_verdicts ? kExitOk : kExitRefused;
}

}  // namespace kd::cli
