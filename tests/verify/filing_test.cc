#include "verify/filing.h"

#include <gtest/gtest.h>

#include "common/errors.h"

namespace kd::verify {
namespace {

constexpr const char* kStub =
    "---\ntitle: x\nstatus: in_progress\nbar: 1.02\n---\n\n## Hypothesis under test\n\n"
    "**Hypothesis** one pass.\n\n## Candidate plan\n- [ ] cand1: a — predict 1.1x\n";

FilingInput input() {
  return {"refuted",
          {"PASS, but speedup 1.01 is below the bar 1.02"},
          "raw/profiles/p1/x-v001/verifier/receipt.json",
          "abc",
          "loaded: [a]\n\n| candidate |\n|---|\n| cand1 |",
          "kernel.py @ 1234567",
          "## Independent measurements\n\n| m | v |",
          {"author 00ff"}};
}

TEST(Filing, FlipsStatusAppendsSectionsAndKeepsThePreRegistration) {
  std::string filed = file_page(kStub, input());
  EXPECT_NE(filed.find("status: filed\nverdict: refuted\nverified_by: kdispatch-verifier\n"
                       "verification_receipt: raw/profiles/p1/x-v001/verifier/receipt.json\n"),
            std::string::npos)
      << filed;
  std::string stub_body(kStub);
  stub_body = stub_body.substr(stub_body.find("\n---\n"));
  // The pre-registered text is intact, byte for byte, and precedes everything appended.
  size_t at = filed.find(stub_body);
  ASSERT_NE(at, std::string::npos);
  EXPECT_LT(at, filed.find("## Candidate ledger"));
  EXPECT_NE(filed.find("## Independent measurements"), std::string::npos);
  EXPECT_NE(filed.find("- PASS, but speedup 1.01 is below the bar 1.02"), std::string::npos);
  EXPECT_NE(filed.find("Transcript head: author 00ff"), std::string::npos);
}

TEST(Filing, FiledPagesAreImmutable) {
  std::string filed = file_page(kStub, input());
  EXPECT_THROW(file_page(filed, input()), Error);
  EXPECT_THROW(file_page("no front matter", input()), Error);
  EXPECT_THROW(file_page("---\ntitle: x\n---\nbody", input()), Error);
}

TEST(Filing, CrlfPagesStayCrlf) {
  std::string crlf = "---\r\nstatus: in_progress\r\n---\r\nbody\r\n";
  std::string filed = file_page(crlf, input());
  EXPECT_NE(filed.find("status: filed\r\nverdict: refuted\r\n"), std::string::npos);
  EXPECT_EQ(filed.find("\n\n"), std::string::npos) << "mixed line endings";
}

TEST(Filing, ResultsRowsStayOneLineEach) {
  std::string tsv =
      append_results_row("", {"v001", "2026-12-02", "0.41", "1.31", "", "", "PASS",
                              "kernel-authored", "optimization", "supported", "one\tpass\nkernel"});
  EXPECT_EQ(tsv, std::string(kResultsHeader) +
                     "\nv001\t2026-12-02\t0.41\t1.31\t\t\tPASS\tkernel-"
                     "authored\toptimization\tsupported\tone pass kernel\n");
  ResultsRow next;
  next.exp_id = "v002";
  tsv = append_results_row(tsv, next);
  EXPECT_EQ(std::count(tsv.begin(), tsv.end(), '\n'), 3);
}

}  // namespace
}  // namespace kd::verify
