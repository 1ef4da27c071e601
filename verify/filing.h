// Filing an experiment (program.md K7), only with --file: the stub page gets its status flipped,
// its verdict and receipt stamped in the front matter, and sections appended after the
// pre-registered text, which is never touched; the family's RESULTS.tsv gets one row.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace kd::verify {

struct FilingInput {
  std::string verdict;  // supported | refuted | inconclusive | invalid
  std::vector<std::string> reasons;
  std::string receipt_path;  // relative to the wiki root
  std::string receipt_sha256;
  std::string ledger_markdown;    // the author's ledger: loaded: line + fixed-column table
  std::string final_candidate;    // path + SHA + mechanism paragraph, as the author reported
  std::string verifier_sections;  // pasted verbatim
  std::vector<std::string> transcript_heads;  // "author <hex>", "verifier <hex>"
};

// The sections filing appends (ledger, final candidate, verifier sections, verdict, receipt,
// transcript heads): also the body of the filing proposal written beside every outcome.
std::string filing_sections(const FilingInput& in);

// Returns the filed page. Throws kd::Error when the page has no front matter, is not
// `status: in_progress`, or already carries a verdict.
std::string file_page(std::string_view page, const FilingInput& in);
// The same with the sections already rendered (a filing proposal applied as proposed).
std::string file_page(std::string_view page, const std::string& verdict,
                      const std::string& receipt_path, std::string_view sections);

struct ResultsRow {
  std::string exp_id, date, p50_ms, speedup, tflops, roofline_util, parity, klass, activity, status,
      description;
};

inline constexpr std::string_view kResultsHeader =
    "exp_id\tdate\tp50_ms\tspeedup\ttflops\troofline_"
    "util\tparity\tclass\tactivity\tstatus\tdescription";

// filing.md: the proposal written beside every outcome (`filing` is outcome.json's "filing").
std::string filing_proposal(const std::string& page, const std::string& experiment_key,
                            const nlohmann::json& filing);

// Applies an outcome's filing proposal to the wiki: the sections appended to the experiment page
// byte for byte as proposed, its status flipped, the RESULTS.tsv row added, both committed.
// Pre-registered text is never touched. Throws kd::Error naming what failed.
void file_into_wiki(const std::filesystem::path& wiki, const std::string& family,
                    const std::string& experiment, const nlohmann::json& outcome);

// The ledger with one more row (the header first when the ledger is new). Tabs and newlines in
// fields become spaces so a row stays one row.
std::string append_results_row(std::string_view existing_tsv, const ResultsRow& row);

}  // namespace kd::verify
