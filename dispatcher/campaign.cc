#include "dispatcher/campaign.h"

#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <mutex>
#include <semaphore>
#include <thread>

#include "briefs/queue.h"
#include "common/errors.h"
#include "common/time.h"
#include "contract/chips.h"
#include "contract/end_reason.h"
#include "dispatcher/audit_after_verdict.h"
#include "dispatcher/author_run.h"
#include "dispatcher/campaign_process.h"
#include "dispatcher/campaign_report.h"
#include "dispatcher/campaign_state.h"
#include "dispatcher/experiment_error.h"
#include "dispatcher/verify_run.h"

namespace kd::dispatcher {
namespace {

namespace fs = std::filesystem;

double cpu_seconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

class Campaign {
 public:
  Campaign(const CampaignOptions& o, const std::atomic<bool>& stop) : o_(o), stop_(stop) {
    // Every journal already under the run root: the state a resume continues from.
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(o_.run_root, ec)) {
      if (fs::is_regular_file(e.path() / "journal.jsonl")) journals_.at(e.path());
    }
  }

  CampaignReport run() {
    auto t0 = std::chrono::steady_clock::now();
    std::vector<briefs::QueuedExperiment> queue =
        briefs::in_progress_experiments(o_.wiki, o_.families);
    report_.experiments.resize(queue.size());
    std::map<std::string, std::vector<size_t>> by_family;
    for (size_t i = 0; i < queue.size(); ++i)
      by_family[queue[i].family].push_back(i);

    std::unique_ptr<ChipBackend> own_backend;
    chips_ = o_.chip_backend;
    if (!chips_)
      chips_ = (own_backend = make_chip_backend(contract::load_chip_inventory_or_default(o_.chips)))
                   .get();
    int parallel = o_.parallel;
    if (parallel <= 0) parallel = chips_->parallel();
    if (o_.supervise || o_.supervise_dir) parallel = 1;
    std::counting_semaphore<> slots(std::max(parallel, 1));
    std::error_code ec;
    fs::create_directories(o_.run_root, ec);
    if (ec) throw_sys("mkdir", quote(o_.run_root.string()), ec.value());
    CampaignProcess process(o_.run_root, o_.process_info, std::max(1.0, o_.status_interval_s));
    std::thread ticker([this] { tick(); });
    std::vector<std::thread> workers;
    for (auto& [family, items] : by_family) {
      workers.emplace_back([&, items = items] {
        for (size_t i : items) {
          wait_out_pause();
          slots.acquire();
          report_.experiments[i] = run_experiment(queue[i]);
          slots.release();
          react(report_.experiments[i]);
          announce(report_.experiments[i]);
        }
      });
    }
    for (auto& w : workers)
      w.join();
    {
      std::lock_guard lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    ticker.join();
    size_t errors = 0;
    for (const auto& e : report_.experiments)
      errors += e.is_error();
    process.end(report_.halted.empty() ? std::to_string(errors) + " errors" : report_.halted);
    report_.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    report_.cpu_s = cpu_seconds();
    finish();
    return report_;
  }

 private:
  // The journal's view of one experiment, if any.
  std::optional<ExperimentState> state_of(const std::string& key) {
    for (Journal* j : journals_.all()) {
      for (auto& s : fold_journal(j->records())) {
        if (s.experiment == key) return s;
      }
    }
    return std::nullopt;
  }

  double spent() {
    double total = 0;
    for (Journal* j : journals_.all()) {
      for (const auto& s : fold_journal(j->records()))
        total += s.cost_usd;
    }
    return total;
  }

  ExperimentResult run_experiment(const briefs::QueuedExperiment& q) {
    ExperimentResult out;
    out.experiment = q.family + "/" + q.experiment;
    if (!q.problem.empty()) {
      out.outcome = contract::ExperimentOutcome::of(contract::OutcomeKind::Refused);
      out.reasons = {q.problem};
      return out;
    }
    std::optional<ExperimentState> state = state_of(out.experiment);
    if (state && state->done()) {
      out.outcome = contract::parse_outcome(state->verdict)
                        .value_or(contract::ExperimentOutcome::of(contract::OutcomeKind::Error));
      out.run_dir = state->run_dir;
      out.earlier = true;
      return out;
    }
    if (state && !o_.resume) {
      if (state->failed()) {
        out.outcome =
            contract::ExperimentOutcome::error(contract::parse_error_cause(state->error_cause)
                                                   .value_or(contract::ErrorCause::Internal));
        out.reasons = {"the journal records an error: " + state->error_message +
                       " (retry it with --resume)"};
        out.run_dir = state->run_dir;
        return out;
      }
      out.outcome = contract::ExperimentOutcome::of(contract::OutcomeKind::Refused);
      out.reasons = {"the journal holds unfinished work of this experiment (" + state->phase +
                     "); continue it with --resume"};
      return out;
    }
    const bool authored = state && state->authored();
    if (std::string why = halted(); !why.empty() || (!state && (stop_.load() || over_budget()))) {
      out.outcome = contract::ExperimentOutcome::of(contract::OutcomeKind::NotDispatched);
      out.reasons = {!why.empty()   ? "the campaign stopped: " + why
                     : stop_.load() ? "stop requested"
                                    : "campaign cost budget spent"};
      std::lock_guard lock(mu_);
      report_.stopped = true;
      return out;
    }
    try {
      if (!authored) {
        AuthorOptions a;
        a.wiki = o_.wiki;
        a.family = q.family;
        a.experiment = q.experiment;
        a.chips = o_.chips;
        a.run_root = o_.run_root;
        a.model = o_.model;
        a.budgets = o_.budgets;
        a.tool_dirs = o_.tool_dirs;
        a.supervise = o_.supervise;
        a.supervise_dir = o_.supervise_dir;
        a.journals = &journals_;
        a.chip_backend = chips_;
        a.resume = state.has_value();
        a.retry_after_error = state && state->failed();
        AuthorReport r = run_author(a);
        if (r.refused) {
          out.outcome = contract::ExperimentOutcome::of(contract::OutcomeKind::Refused);
          out.reasons = {r.refusal};
          return out;
        }
        out.run_dir = r.run_dir;
        if (r.session.end_reason.kind == contract::EndReason::Kind::Stopped)
          return stopped_by_supervisor(out);
      } else {
        out.run_dir = state->run_dir;
        if (state->finished.value("end_reason", "") ==
            contract::to_string(contract::EndReason::stopped()))
          return stopped_by_supervisor(out);
      }
      VerifyOptions v;
      v.run_dir = out.run_dir;
      v.chips = o_.chips;
      v.mode = o_.mode;
      v.verify_cmd = o_.verify_cmd;
      v.tool_dirs = o_.tool_dirs;
      v.file = o_.file;
      v.journals = &journals_;
      v.chip_backend = chips_;
      v.busy_chips = author_chips();
      VerifyReport vr = run_verify(v);
      out.outcome = contract::ExperimentOutcome::of(vr.verdict);
      out.reasons = vr.reasons;
      if (!vr.reused) out.reasons.push_back(audit_after_verdict(out.run_dir).line);
    } catch (const ExperimentError& e) {
      fail(out, e.cause(), e.what());
    } catch (const Error& e) {
      fail(out, contract::ErrorCause::Internal, e.what());
    } catch (const std::exception& e) {
      fail(out, contract::ErrorCause::Internal, std::string("internal error: ") + e.what());
    }
    return out;
  }

  // A session the supervising person stopped has no candidate it stands behind: nothing goes to
  // the verifier, and it is not an error to retry.
  static ExperimentResult& stopped_by_supervisor(ExperimentResult& out) {
    out.outcome = contract::ExperimentOutcome::of(contract::OutcomeKind::NotDispatched);
    out.reasons = {
        "the supervising person stopped the author session (stopped_by_supervisor): "
        "nothing goes to the verifier"};
    return out;
  }

  // An error outcome, journalled with its cause unless its step did (the author journals a
  // provider's give-up itself). Nothing journalled when the experiment was never dispatched.
  void fail(ExperimentResult& out, contract::ErrorCause cause, const std::string& message) {
    out.outcome = contract::ExperimentOutcome::error(cause);
    out.reasons = {message};
    std::optional<ExperimentState> s = state_of(out.experiment);
    if (!s) return;
    out.run_dir = s->run_dir;
    if (s->failed()) return;
    try {
      journals_.at(fs::path(s->run_dir).parent_path())
          .append(rec::kError, out.experiment,
                  {{"cause", contract::to_string(cause)},
                   {"message", message},
                   {"phase", s->authored() ? "verify" : "author"}});
    } catch (const Error& e) {
      out.reasons.push_back(std::string("the error could not be journalled: ") + e.what());
    }
  }

  std::string halted() {
    std::lock_guard lock(mu_);
    return report_.halted;
  }

  void halt(const std::string& why) {
    std::lock_guard lock(mu_);
    if (!report_.halted.empty()) return;
    report_.halted = why;
    report_.stopped = true;
    std::fprintf(stderr, "kdispatch run: %s\n", why.c_str());
  }

  // After each experiment: an auth failure or a spend cap stops dispatch, an outage pauses it
  // (longer each time), anything that reached the provider ends the pause.
  void react(const ExperimentResult& r) {
    if (!r.is_error()) {
      if (!r.earlier) {
        std::lock_guard lock(mu_);
        outages_ = 0;
      }
      return;
    }
    const contract::ErrorCause cause = r.outcome.cause;
    const std::string what =
        r.reasons.empty() ? std::string(contract::to_string(cause)) : r.reasons.front();
    if (contract::stops_campaign(cause)) {
      halt("stopping the campaign: " + what +
           "; fix it, then continue with `kdispatch run --resume`");
      return;
    }
    if (!contract::pauses_campaign(cause)) return;
    double wait = 0;
    {
      std::lock_guard lock(mu_);
      wait = o_.outage_backoff_s * std::pow(2.0, outages_);
      ++outages_;
      if (paused_s_ + wait <= o_.outage_wait_s && o_.outage_wait_s > 0) {
        paused_s_ += wait;
        paused_until_ = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(wait));
        std::fprintf(stderr, "kdispatch run: %s; pausing dispatch for %.0f s\n", what.c_str(),
                     wait);
        return;
      }
    }
    char waited[64];
    {
      std::lock_guard lock(mu_);
      std::snprintf(waited, sizeof waited, "%.0f s", paused_s_);
    }
    halt("the provider is still failing after pauses of " + std::string(waited) + " in all (" +
         what + "); stopping: `kdispatch run --resume` continues once it is back");
  }

  // Holds a dispatch while the campaign is paused for an outage (a stop request or a halt ends
  // the wait: the experiment is then not dispatched).
  void wait_out_pause() {
    for (;;) {
      {
        std::lock_guard lock(mu_);
        if (std::chrono::steady_clock::now() >= paused_until_ || !report_.halted.empty()) return;
      }
      if (stop_.load()) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }

  // An outcome this run reached (not one recorded earlier) goes to the notification command.
  void announce(const ExperimentResult& r) {
    if (!r.earlier) notifier_.send(outcome_event(r));
  }

  // The end of the run (its process record already says so): the report regenerated, the end
  // announced.
  void finish() {
    const std::string index = o_.write_report ? regenerate_report(o_.run_root) : "";
    notifier_.send(campaign_end_event(report_, index));
  }

  // The chips of experiments in their author phase now.
  std::vector<std::string> author_chips() {
    std::vector<std::string> chips;
    for (Journal* j : journals_.all()) {
      for (const auto& s : fold_journal(j->records())) {
        if (s.phase == rec::kDispatched || s.phase == rec::kAuthorTurn ||
            s.phase == rec::kCommitted)
          chips.push_back(s.chip);
      }
    }
    return chips;
  }

  bool over_budget() { return o_.max_campaign_cost_usd > 0 && spent() >= o_.max_campaign_cost_usd; }

  void tick() {
    auto emit = o_.on_status ? o_.on_status : [](const std::string& line) {
      std::fprintf(stderr, "%s\n", line.c_str());
    };
    std::unique_lock lock(mu_);
    auto period = std::chrono::duration<double>(o_.status_interval_s);
    while (!cv_.wait_for(lock, period, [this] { return done_; })) {
      lock.unlock();
      std::string now = utc_now_rfc3339();
      for (Journal* j : journals_.all()) {
        for (const auto& s : fold_journal(j->records())) {
          if (!s.done() && !s.failed()) emit(status_line(s, now));
        }
      }
      lock.lock();
    }
  }

  const CampaignOptions& o_;
  const std::atomic<bool>& stop_;
  Notifier notifier_{o_.notify_cmd};
  JournalSet journals_;
  ChipBackend* chips_ = nullptr;
  CampaignReport report_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  int outages_ = 0;      // consecutive pauses for an outage
  double paused_s_ = 0;  // seconds paused in all
  std::chrono::steady_clock::time_point paused_until_{};
};

}  // namespace

CampaignReport run_campaign(const CampaignOptions& options, const std::atomic<bool>& stop) {
  return Campaign(options, stop).run();
}

}  // namespace kd::dispatcher
