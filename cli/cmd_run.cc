#include <signal.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "cli/args.h"
#include "cli/command_table.h"
#include "cli/commands.h"
#include "cli/model_args.h"
#include "common/errors.h"
#include "common/exit_codes.h"
#include "common/words.h"
#include "contract/chips.h"
#include "dispatcher/campaign.h"
#include "dispatcher/chip_backend.h"
#include "dispatcher/preflight.h"

namespace kd::cli {
namespace {

// The run's own record: what `kdispatch status` shows beside the pid and the heartbeat.
nlohmann::json process_info(const Args& args, const dispatcher::CampaignOptions& o) {
  std::vector<std::string> argv = {"kdispatch", "run"};
  argv.insert(argv.end(), args.begin(), args.end());
  return {
      {"command_line", argv},
      {"version", std::string(version())},
      {"wiki", o.wiki.string()},
      {"mode", o.mode},
      {"families", o.families},
      {"model",
       {{"provider", o.model.provider}, {"name", o.model.model}, {"base_url", o.model.base_url}}},
      {"budgets",
       {{"max_turns", o.budgets.max_turns},
        {"max_cost_usd", o.budgets.max_cost_usd},
        {"max_campaign_cost_usd", o.max_campaign_cost_usd}}}};
}

void print_preflight(const dispatcher::PreflightReport& r) {
  std::printf("queue: %zu experiments\n", r.queue.size());
  for (const auto& q : r.queue)
    std::printf("  %s/%s  %s\n", q.family.c_str(), q.experiment.c_str(), q.page.c_str());
  std::printf("checks:\n");
  for (const auto& c : r.checks)
    std::printf("  ok  %s\n", c.c_str());
  for (const auto& p : r.problems)
    std::printf("  BAD %s\n", p.c_str());
}

// SIGINT/SIGTERM: the first stops new dispatches and lets the experiments in flight finish; the
// second stops now, cancelling the campaign's Slurm jobs (scancel) first. Everything done so far
// is journalled, so `--resume` continues either way.
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
  // The backend whose jobs the second signal cancels.
  void cancel_on_stop_now(dispatcher::ChipBackend* chips) { chips_ = chips; }

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
        try {
          if (dispatcher::ChipBackend* chips = chips_.load()) chips->cancel_all();
        } catch (const std::exception& e) {
          std::fprintf(stderr, "kdispatch run: the Slurm jobs could not be cancelled: %s\n",
                       e.what());
        }
        std::_Exit(128 + sig);  // boxes die with their parent; the journal is durable
      }
    }
  }
  std::atomic<dispatcher::ChipBackend*> chips_{nullptr};
  sigset_t set_;
  std::atomic<bool> stop_{false}, done_{false};
  std::thread watcher_;
};

}  // namespace

// kdispatch run --wiki DIR [--family SLUG]... [MODEL] [--chips FILE] [--run-root DIR]
//   [--verify-cmd TEMPLATE] [--mode screen|full] [--tool-dir DIR]... [--resume] [--file]
//   [--parallel N] [--status-every S] [--max-turns N] [--max-cost USD] [--max-campaign-cost USD]
//   [--outage-wait S] [--outage-backoff S] [--retry-errors] [--dry-run] [--notify-cmd CMD]
//   [--supervise | --supervise-dir DIR]
// Supervised (docs/dispatcher.md "Supervision"), experiments run one at a time and a session the
// person stops ends "not dispatched" without a verifier.
// Exit 0 when every experiment got a verdict the receipt carries (supported, refuted), 75 when
// any ended in an error (retry with --resume), else 2 (inconclusive, invalid, refused, not
// dispatched, or preflight failed).
int cmd_run(const Args& args) {
  std::vector<OptSpec> specs = {{"wiki"},
                                {"family", true, true},
                                {"chips"},
                                {"run-root"},
                                {"verify-cmd"},
                                {"mode"},
                                {"tool-dir", true, true},
                                {"resume", false},
                                {"retry-errors", false},
                                {"dry-run", false},
                                {"file", false},
                                {"parallel"},
                                {"status-every"},
                                {"outage-wait"},
                                {"outage-backoff"},
                                {"max-campaign-cost"},
                                {"notify-cmd"},
                                {"supervise", false},
                                {"supervise-dir"}};
  for (auto& s : model_option_specs())
    specs.push_back(s);
  ParsedArgs p = parse_args(args, specs);
  if (!p.positional.empty()) throw UsageError("unexpected argument " + p.positional[0]);
  dispatcher::CampaignOptions o;
  o.wiki = p.required("wiki");
  o.families = p.all("family");
  for (const auto& f : o.families)
    check_family(f);
  if (p.has("chips")) o.chips = p.get("chips");
  o.run_root = p.get("run-root", "run-root");
  o.model = model_config(p);
  o.budgets = session_budgets(p);
  o.max_campaign_cost_usd = number_option(p, "max-campaign-cost", 0, 0, 1e7);
  if (p.has("verify-cmd")) o.verify_cmd = p.get("verify-cmd");
  o.mode = p.get("mode", "full");
  if (o.mode != "screen" && o.mode != "full") throw UsageError("--mode is screen or full");
  for (const auto& d : p.all("tool-dir"))
    o.tool_dirs.emplace_back(d);
  // --retry-errors: the same continuation, said for a campaign that finished with errors.
  o.resume = p.has("resume") || p.has("retry-errors");
  o.file = p.has("file");
  o.parallel = static_cast<int>(int_option(p, "parallel", 0, 0, 1024));
  o.supervise = p.has("supervise");
  if (p.has("supervise-dir")) o.supervise_dir = p.get("supervise-dir");
  if (o.supervise && o.supervise_dir)
    throw UsageError("--supervise (the terminal) and --supervise-dir (files) exclude each other");
  if ((o.supervise || o.supervise_dir) && o.parallel > 1)
    throw UsageError("a supervised campaign runs one experiment at a time: --parallel " +
                     std::to_string(o.parallel) + " is refused");
  o.status_interval_s = number_option(p, "status-every", 15, 0.1, 86400);
  o.outage_wait_s = number_option(p, "outage-wait", o.outage_wait_s, 0, 7 * 86400);
  o.outage_backoff_s = number_option(p, "outage-backoff", o.outage_backoff_s, 0.1, 86400);

  if (p.has("notify-cmd")) {
    try {
      o.notify_cmd = split_words(p.get("notify-cmd"), "--notify-cmd");
    } catch (const Error& e) {
      throw UsageError(e.what());
    }
  }

  dispatcher::PreflightInput pre;
  pre.wiki = o.wiki;
  pre.families = o.families;
  pre.chips = o.chips;
  pre.run_root = o.run_root;
  pre.model = o.model;
  pre.budgets = o.budgets;
  pre.author = pre.verify = true;
  pre.verify_cmd = o.verify_cmd;
  pre.tool_dirs = o.tool_dirs;
  dispatcher::PreflightReport checked = dispatcher::preflight(pre);
  if (p.has("dry-run")) {
    print_preflight(checked);
    std::printf("dry run: nothing was dispatched or written\n");
    return checked.ok() ? kExitOk : kExitRefused;
  }
  if (!checked.ok()) throw dispatcher::PreflightFailed(checked);
  o.process_info = process_info(args, o);
  o.process_info["queued"] = checked.queue.size();

  // The signals are blocked before the backend starts its poll thread, so only the watcher
  // receives them. One backend for the whole campaign: one Slurm poller for every job in flight.
  // Declared first so that it outlives the signal watcher that may cancel its jobs.
  std::unique_ptr<dispatcher::ChipBackend> chips;
  StopSignals signals;
  chips = dispatcher::make_chip_backend(contract::load_chip_inventory_or_default(o.chips));
  o.chip_backend = chips.get();
  signals.cancel_on_stop_now(chips.get());
  dispatcher::CampaignReport r = dispatcher::run_campaign(o, signals.stop());
  bool all_verdicts = true, any_error = false;  // all: supported or refuted
  for (const auto& e : r.experiments) {
    std::printf("%-28s %-14s %s\n", e.experiment.c_str(), contract::to_string(e.outcome).c_str(),
                e.earlier ? "(recorded earlier)" : e.run_dir.c_str());
    for (const auto& reason : e.reasons)
      std::printf("    - %s\n", reason.c_str());
    // As `verify`: only a verdict the receipt carries is a success.
    all_verdicts = all_verdicts && e.outcome.is_verdict() &&
                   (e.outcome.verdict == contract::Verdict::Supported ||
                    e.outcome.verdict == contract::Verdict::Refuted);
    any_error = any_error || e.is_error();
  }
  std::printf("%zu experiments, wall %.1f s, kdispatch cpu %.2f s%s\n", r.experiments.size(),
              r.wall_s, r.cpu_s, r.stopped ? " (stopped: resume with --resume)" : "");
  if (!r.halted.empty()) std::printf("stopped: %s\n", r.halted.c_str());
  if (r.experiments.empty()) std::printf("nothing queued: no committed in_progress experiment\n");
  if (any_error || !r.halted.empty()) {
    std::fprintf(stderr,
                 "kdispatch run: some experiments ended in an error, not a verdict; nothing of "
                 "theirs was filed. Retry them with `kdispatch run --resume`\n");
    return kExitTempFail;
  }
  return all_verdicts ? kExitOk : kExitRefused;
}

}  // namespace kd::cli
