#include "dispatcher/campaign_state.h"

#include <cstdio>

#include "common/time.h"

namespace kd::dispatcher {

std::vector<ExperimentState> fold_journal(const std::vector<JournalRecord>& records) {
  std::vector<ExperimentState> out;
  std::map<std::string, size_t> index;
  for (const auto& r : records) {
    auto [it, inserted] = index.try_emplace(r.experiment, out.size());
    if (inserted) {
      out.emplace_back();
      out.back().experiment = r.experiment;
      out.back().first_ts = r.ts;
    }
    ExperimentState& s = out[it->second];
    s.phase = r.type;
    s.last_ts = r.ts;
    const auto& d = r.data;
    if (r.type == rec::kDispatched) {
      s.chip = d.value("chip", "");
      s.branch = d.value("branch", "");
      s.run_dir = d.value("run_dir", "");
    } else if (r.type == rec::kAuthorTurn) {
      s.turns = d.value("turn", s.turns);
      s.input_tokens = d.value("input_tokens", s.input_tokens);
      s.output_tokens = d.value("output_tokens", s.output_tokens);
      s.cost_usd = d.value("cost_usd", s.cost_usd);
    } else if (r.type == rec::kCommitted) {
      s.commits.push_back(d);
    } else if (r.type == rec::kFinished) {
      s.finished = d;
    } else if (r.type == rec::kVerifyStarted) {
      s.chip = d.value("chip", s.chip);
    } else if (r.type == rec::kReceiptValidated) {
      s.receipt = d;
    } else if (r.type == rec::kVerdict) {
      s.verdict = d.value("verdict", "");
    }
  }
  return out;
}

std::string status_line(const ExperimentState& s, const std::string& now_ts) {
  // 0 for a stamp that does not parse: the elapsed time is then shown as 0.
  double start = parse_rfc3339(s.first_ts).value_or(0);
  double end = parse_rfc3339(s.done() ? s.last_ts : now_ts).value_or(0);
  double elapsed = start > 0 && end >= start ? end - start : 0;
  std::string phase = s.verdict.empty() ? s.phase : s.phase + " (" + s.verdict + ")";
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "%-28s %-24s chip %-4s turns %3d tokens %8ld cost $%7.3f elapsed %6.0fs",
                s.experiment.c_str(), phase.c_str(), s.chip.empty() ? "-" : s.chip.c_str(), s.turns,
                s.input_tokens + s.output_tokens, s.cost_usd, elapsed);
  return buf;
}

}  // namespace kd::dispatcher
