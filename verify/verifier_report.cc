#include "verify/verifier_report.h"

#include "verify/markdown_literal.h"

#include <cmath>
#include <regex>

namespace kd::verify {
namespace {

using json = nlohmann::json;

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
    out += std::string(out.empty() ? "" : "\n") + "## " + title + "\n\n" +
           literal_block(report.value(key, ""));
  return out;
}

}  // namespace kd::verify
