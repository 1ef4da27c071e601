#include "dispatcher/llm_verifier.h"

#include <cmath>
#include <regex>

#include "agents/roles.h"
#include "agents/tools.h"
#include "common/files.h"
#include "dispatcher/author_tools.h"
#include "dispatcher/box_user.h"
#include "dispatcher/session_runner.h"
#include "sandbox/box.h"
#include "sandbox/profile.h"

namespace kd::dispatcher {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

constexpr const char* kSections[][2] = {{"independent_measurements", "Independent measurements"},
                                        {"profile", "Profile"},
                                        {"hlo_dump", "HLO Dump"},
                                        {"headroom_leads", "Headroom leads"}};

std::vector<double> numbers_in(const std::string& text) {
  static const std::regex num(R"(-?\d+(\.\d+)?([eE][-+]?\d+)?)");
  std::vector<double> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), num); it != std::sregex_iterator();
       ++it)
    out.push_back(std::strtod(it->str().c_str(), nullptr));
  return out;
}

}  // namespace

std::vector<std::string> check_verifier_report(const json& report, const std::string& receipt) {
  std::vector<std::string> problems;
  std::string all;
  for (const auto& [key, title] : kSections) {
    std::string body = report.value(key, "");
    if (body.find_first_not_of(" \n\t") == std::string::npos)
      problems.push_back(std::string(key) + ": the " + title + " section is empty");
    all += body + "\n";
  }
  static const std::regex audit(
      "Hypothesis-firing audit: (HYPOTHESIS FIRING CONFIRMED|SILENT NO-OP DETECTED|PARTIAL) "
      "\xE2\x80\x94 \\S");
  if (!std::regex_search(report.value("hlo_dump", ""), audit)) {
    problems.push_back(
        "hlo_dump: no audit line `Hypothesis-firing audit: HYPOTHESIS FIRING CONFIRMED|SILENT "
        "NO-OP DETECTED|PARTIAL — <evidence>` (an em dash before the evidence)");
  }
  // A decimal number quoted in the report must be a receipt number, at the precision quoted.
  std::vector<double> known = numbers_in(receipt);
  static const std::regex decimal(R"((^|[^\w.])(-?\d+\.(\d+)))");
  for (auto it = std::sregex_iterator(all.begin(), all.end(), decimal);
       it != std::sregex_iterator(); ++it) {
    double quoted = std::strtod((*it)[2].str().c_str(), nullptr);
    double half_ulp = 0.5 * std::pow(10.0, -static_cast<double>((*it)[3].length())) + 1e-12;
    bool found = false;
    for (double k : known)
      found = found || std::fabs(k - quoted) <= half_ulp;
    if (!found)
      problems.push_back("the number " + (*it)[2].str() +
                         " is not in the receipt: quote only the receipt's numbers");
  }
  return problems;
}

std::string render_verifier_report(const json& report) {
  std::string out;
  for (const auto& [key, title] : kSections)
    out += std::string(out.empty() ? "" : "\n") + "## " + title + "\n\n" + report.value(key, "") +
           "\n";
  return out;
}

LlmVerifierResult run_llm_verifier(const LlmVerifierInput& in) {
  const fs::path dir = in.run_dir / "verifier";
  const fs::path work = dir / "session";
  fs::create_directories(work);
  const std::string receipt_text = read_file(in.receipt);
  write_file_atomic(work / "receipt.json", receipt_text);
  hand_to_box_user(work);

  // Read-only everywhere but its own scratch copy: the snapshot and the receipt directory.
  sandbox::BoxSpec spec;
  spec.profile = sandbox::load_profile("verifier");
  spec.worktree = work;
  spec.ro = {in.snapshot, in.receipt.parent_path()};
  std::unique_ptr<sandbox::Box> box = sandbox::Box::open(spec);
  AuthorToolConfig tc;
  tc.box = box.get();
  tc.worktree = work;
  tc.finish_reply = "report accepted";
  AuthorToolHost host(tc);

  agents::SessionConfig sc;
  sc.session_id = in.brief.family + "-" + in.brief.experiment + "-verifier";
  sc.role = "verifier";
  sc.system_prompt = agents::verifier_system_prompt(in.brief.markdown());
  sc.first_user_message =
      "Report on the verification of " + in.brief.family + " " + in.brief.experiment +
      ".\n\n- The receipt is receipt.json in your work dir (" + work.string() + "), a copy of " +
      in.receipt_rel + ".\n- The frozen candidate is under " + in.snapshot.string() +
      " (read-only).\n- Call finish with the four sections; quote only numbers from the receipt.\n";
  sc.tools = agents::verifier_tools();
  sc.transcript_dir = dir;
  sc.resume = fs::exists(dir / "transcript.jsonl");
  sc.header = {{"family", in.brief.family},
               {"experiment", in.brief.experiment},
               {"brief_sha256", in.brief.sha256()},
               {"model",
                {{"provider", in.model.provider},
                 {"name", in.model.model},
                 {"base_url", in.model.base_url}}},
               {"chip", in.chip.id},
               {"worktree", work.string()},
               {"receipt", in.receipt_rel}};
  sc.finish.check = [&receipt_text](const json& report) {
    return check_verifier_report(report, receipt_text);
  };
  agents::SessionResult r = run_session_blocking(sc, host, in.model);
  LlmVerifierResult out;
  out.end_reason = r.end_reason;
  out.transcript_head = r.transcript_head;
  if (r.finish) out.sections = render_verifier_report(*r.finish);
  return out;
}

}  // namespace kd::dispatcher
