// The report's pages as HTML text (docs/report.md): the index (campaigns, the experiment table,
// the chip timelines, the charts) and one page per experiment (its summary, brief, ledger,
// filing, receipt, audit findings and the transcript viewer). Pure functions of the model and
// the files they name; writing them is write_report's (write.h).
#pragma once

#include <string>

#include "report/model.h"
#include "report/transcript_view.h"

namespace kd::report {

std::string render_index(const Report& r);

// `author` (and `verifier`, when that session exists) are the experiment's transcripts.
std::string render_experiment(const Report& r, const Campaign& c, const ExperimentRow& e,
                              const TranscriptView& author, const TranscriptView* verifier);

// The transcript viewer alone (a section of the experiment page).
std::string render_transcript_html(const TranscriptView& v, const std::string& id);

}  // namespace kd::report
