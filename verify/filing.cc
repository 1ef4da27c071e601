#include "verify/filing.h"

#include "common/errors.h"
#include "common/files.h"
#include "git/repo.h"
#include "verify/markdown_literal.h"

namespace kd::verify {
namespace {

std::string clean_field(std::string s) {
  for (char& c : s) {
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  }
  return s;
}

}  // namespace

std::string filing_sections(const FilingInput& in) {
  // The headings and the verdict are kdispatch's; everything an author, a verifier model or a
  // receipt wrote is pasted as literal text (a fenced block, or escaped inline), so it cannot
  // add a section, a link or front matter to the filed page.
  std::string out = "## Candidate ledger\n\n" + literal_block(in.ledger_markdown) +
                    "\n## Final candidate\n\n" + literal_block(in.final_candidate) + "\n" +
                    in.verifier_sections + "\n\n## Verdict\n\n**" + literal_inline(in.verdict) +
                    "** (kdispatch, fixed rules)\n\n";
  for (const auto& r : in.reasons)
    out += "- " + literal_inline(r) + "\n";
  out += "\nReceipt: " + literal_inline(in.receipt_path) + " (sha256 " +
         literal_inline(in.receipt_sha256) + ")\n";
  for (const auto& h : in.transcript_heads)
    out += "Transcript head: " + literal_inline(h) + "\n";
  return out;
}

std::string file_page(std::string_view page, const FilingInput& in) {
  return file_page(page, in.verdict, in.receipt_path, filing_sections(in));
}

std::string file_page(std::string_view page, const std::string& verdict,
                      const std::string& receipt_path, std::string_view sections) {
  bool crlf = page.find("\r\n") != std::string_view::npos;
  std::string eol = crlf ? "\r\n" : "\n";
  size_t start = page.rfind("\xEF\xBB\xBF", 0) == 0 ? 3 : 0;
  if (page.substr(start, 3) != "---") throw Error("experiment page has no front matter");
  size_t fm_end = page.find(eol + "---", start + 3);
  if (fm_end == std::string_view::npos) throw Error("experiment page front matter is not closed");
  std::string front(page.substr(0, fm_end));
  std::string body(page.substr(fm_end));  // from the closing "---" on: kept byte for byte

  for (const std::string* v : {&verdict, &receipt_path}) {
    if (v->find_first_of("\r\n") != std::string::npos)
      throw Error("front matter value " + quote(*v) + " has a line break; not filed");
  }
  bool status_seen = false;
  std::string out_front;
  size_t pos = 0;
  while (pos < front.size()) {
    size_t nl = front.find(eol, pos);
    std::string line = front.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    pos = nl == std::string::npos ? front.size() : nl + eol.size();
    std::string key = line.substr(0, line.find(':'));
    if (key == "verdict") throw Error("experiment page already carries a verdict: " + line);
    if (key == "status") {
      if (line.find("in_progress") == std::string::npos) {
        throw Error("experiment page is not in progress (" + line + "); a filed page is immutable");
      }
      status_seen = true;
      line = "status: filed" + eol + "verdict: " + verdict + eol +
             "verified_by: kdispatch-verifier" + eol + "verification_receipt: " + receipt_path;
    }
    out_front += line;
    if (pos < front.size() || nl != std::string::npos) out_front += eol;
  }
  if (!status_seen) throw Error("experiment page front matter has no status");

  // Built with "\n", then converted, so a CRLF page stays CRLF throughout.
  std::string appended = "\n" + std::string(sections);
  if (crlf) {
    std::string converted;
    for (char c : appended) {
      if (c == '\r') continue;
      if (c == '\n') converted += '\r';
      converted += c;
    }
    appended = std::move(converted);
  }
  std::string filed = out_front + body;
  if (filed.size() < eol.size() || filed.compare(filed.size() - eol.size(), eol.size(), eol) != 0)
    filed += eol;
  return filed + appended;
}

std::string append_results_row(std::string_view existing_tsv, const ResultsRow& r) {
  std::string out(existing_tsv);
  if (out.empty()) out = std::string(kResultsHeader) + "\n";
  if (out.back() != '\n') out += '\n';
  const std::string fields[] = {r.exp_id,   r.date,          r.p50_ms,     r.speedup,
                                r.tflops,   r.roofline_util, r.parity,     r.klass,
                                r.activity, r.status,        r.description};
  for (size_t i = 0; i < std::size(fields); ++i)
    out += (i ? "\t" : "") + clean_field(fields[i]);
  return out + "\n";
}

std::string filing_proposal(const std::string& page, const std::string& experiment_key,
                            const nlohmann::json& filing) {
  return "# Filing proposal: " + experiment_key + "\n\nPage: " + page + "\n\n" +
         filing.value("sections", "") + "\n## RESULTS.tsv row\n\n```\n" +
         filing.value("results_row", "") + "```\n";
}

void file_into_wiki(const std::filesystem::path& wiki, const std::string& family,
                    const std::string& experiment, const nlohmann::json& outcome) {
  namespace fs = std::filesystem;
  const nlohmann::json& f = outcome.at("filing");
  const std::string page_rel = f.value("page", ""), tsv_rel = f.value("results_tsv", "");
  const std::string verdict = outcome.value("verdict", "");
  std::string receipt_path = outcome.value("/receipt/path"_json_pointer, "");
  std::string filed =
      file_page(read_file(wiki / page_rel), verdict, receipt_path.empty() ? "(none)" : receipt_path,
                f.value("sections", ""));
  std::string tsv;
  if (fs::exists(wiki / tsv_rel)) tsv = read_file(wiki / tsv_rel);
  if (tsv.empty()) tsv = std::string(kResultsHeader) + "\n";
  tsv += f.value("results_row", "");
  write_file_atomic(wiki / page_rel, filed);
  write_file_atomic(wiki / tsv_rel, tsv);
  git::commit_files(wiki, {page_rel, tsv_rel},
                    "file " + family + " " + experiment + ": " + verdict);
}

}  // namespace kd::verify
