#include "verify/receipt_sections.h"

#include <cmath>
#include <cstdio>

#include "verify/markdown_literal.h"

namespace kd::verify {
namespace {

using json = nlohmann::json;

std::string num(const json& v) {
  if (!v.is_number()) return v.is_null() ? "-" : v.dump();
  double d = v.get<double>();
  if (std::isnan(d)) return "NaN";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.6g", d);
  return buf;
}

// A receipt's string, literal on the page: the receipt is the verify command's output.
std::string text(const json& v) {
  return v.is_string() ? literal_inline(v.get<std::string>()) : "-";
}

const json& at(const json* j, const char* pointer) {
  static const json null;
  if (!j) return null;
  json::json_pointer p(pointer);
  return j->contains(p) ? j->at(p) : null;
}

}  // namespace

std::string receipt_sections(const ReceiptFacts& f) {
  const json* r = f.receipt;
  std::string out = "## Independent measurements\n\n";
  if (!r || !f.check || !f.check->ok) {
    out += "No valid receipt: nothing was measured that a verdict may cite.\n";
    if (f.check)
      for (const auto& p : f.check->problems)
        out += "- " + literal_inline(p) + "\n";
  } else {
    out += "| metric | naive | candidate | delta |\n|---|---|---|---|\n";
    out += "| p50 ms | " + num(at(r, "/p50_ms/baseline")) + " | " +
           num(at(r, "/p50_ms/candidate")) + " | speedup " + num(at(r, "/speedup")) + " |\n\n";
    out += "Parity: " + text(at(r, "/parity_verdict")) + " (max abs " +
           num(at(r, "/parity/max_abs")) + ", max rel " + num(at(r, "/parity/max_rel")) + ")\n";
    out += "REPRODUCTION: " + text(at(r, "/reproduction/status")) + "\n";
    out += "Chip " + literal_inline(f.chip) + ", mode " + literal_inline(f.mode) + ", receipt " +
           literal_inline(f.receipt_path) + "\n";
  }
  out += "\n## Profile\n\nNo profile was captured by this verify command; artifacts: " +
         literal_inline(f.receipt_path.substr(0, f.receipt_path.rfind('/') + 1)) + "\n";
  out += "\n## HLO Dump\n\n";
  std::string fired = text(at(r, "/hlo_audit/status"));
  if (fired == "-") {
    out += "Hypothesis-firing audit: SILENT NO-OP DETECTED — the receipt carries no firing audit\n";
  } else if (fired == "FIRED") {
    out += "Hypothesis-firing audit: HYPOTHESIS FIRING CONFIRMED — firing status FIRED, " +
           num(at(r, "/hlo_audit/custom_call_count")) + " custom calls\n";
  } else {
    out += "Hypothesis-firing audit: SILENT NO-OP DETECTED — firing status " + fired + "\n";
  }
  out +=
      "\n## Headroom leads\n\nNo LLO-visible headroom at this op-point.\n"
      "LLO-informed decision potential: no — no LLO dump on this chip kind\n";
  return out;
}

}  // namespace kd::verify
