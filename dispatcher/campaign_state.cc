#include "dispatcher/campaign_state.h"

#include <cstdio>

#include "common/time.h"

namespace kd::dispatcher {

std::vector<ExperimentState> fold_journal(const std::vector<JournalRecord>& records) {
  std::vector<ExperimentState> out;
  std::map<std::string, size_t> index;
  // Counters of the attempts before the current one (an error starts a new attempt).
  struct Prior {
    int turns = 0;
    long in = 0, out = 0;
    double cost = 0;
  };
  std::vector<Prior> prior;
  for (const auto& r : records) {
    auto [it, inserted] = index.try_emplace(r.experiment, out.size());
    if (inserted) {
      out.emplace_back();
      out.back().experiment = r.experiment;
      out.back().first_ts = r.ts;
      prior.emplace_back();
    }
    ExperimentState& s = out[it->second];
    Prior& before = prior[it->second];
    s.last_ts = r.ts;
    const auto& d = r.data;
    if (r.type == rec::kJobSubmitted) {
      s.jobs[d.value("job_id", "")] = d;
      continue;
    }
    if (r.type == rec::kJobFinished) {
      s.jobs[d.value("job_id", "")]["finished"] = d;
      continue;
    }
    s.phase = r.type;
    if (r.type == rec::kDispatched) {
      s.chip = d.value("chip", "");
      s.branch = d.value("branch", "");
      s.run_dir = d.value("run_dir", "");
    } else if (r.type == rec::kAuthorTurn) {
      s.turns = before.turns + d.value("turn", 0);
      s.input_tokens = before.in + d.value("input_tokens", 0L);
      s.output_tokens = before.out + d.value("output_tokens", 0L);
      s.cost_usd = before.cost + d.value("cost_usd", 0.0);
      s.transcript_head = d.value("transcript_head", s.transcript_head);
    } else if (r.type == rec::kCommitted) {
      s.commits.push_back(d);
    } else if (r.type == rec::kFinished) {
      s.finished = d;
      s.transcript_head = d.value("transcript_head", s.transcript_head);
    } else if (r.type == rec::kVerifyStarted) {
      s.chip = d.value("chip", s.chip);
    } else if (r.type == rec::kReceiptValidated) {
      s.receipt = d;
    } else if (r.type == rec::kVerdict) {
      s.verdict = d.value("verdict", "");
    } else if (r.type == rec::kError) {
      s.error_cause = d.value("cause", "internal");
      s.error_message = d.value("message", "");
      ++s.errors;
      // An author session the provider ended is retried afresh; its spending stays counted.
      if (!s.authored()) before = {s.turns, s.input_tokens, s.output_tokens, s.cost_usd};
    }
  }
  return out;
}

double elapsed_s(const ExperimentState& s, const std::string& now_ts, bool worked_on) {
  // 0 for a stamp that does not parse: the elapsed time is then shown as 0.
  double start = parse_rfc3339(s.first_ts).value_or(0);
  double end = parse_rfc3339(worked_on ? now_ts : s.last_ts).value_or(0);
  return start > 0 && end >= start ? end - start : 0;
}

std::string status_line(const ExperimentState& s, const std::string& now_ts,
                        std::string_view idle) {
  const bool worked_on = !s.done() && !s.failed() && idle.empty();
  double elapsed = elapsed_s(s, now_ts, worked_on);
  std::string phase = s.done()       ? s.phase + " (" + s.verdict + ")"
                      : s.failed()   ? "error (" + s.error_cause + ")"
                      : idle.empty() ? s.phase
                                     : std::string(idle) + " (" + s.phase + ")";
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "%-28s %-24s chip %-4s turns %3d tokens %8ld cost $%7.3f elapsed %6.0fs",
                s.experiment.c_str(), phase.c_str(), s.chip.empty() ? "-" : s.chip.c_str(), s.turns,
                s.input_tokens + s.output_tokens, s.cost_usd, elapsed);
  return buf;
}

}  // namespace kd::dispatcher
