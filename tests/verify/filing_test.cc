#include "verify/filing.h"

#include <gtest/gtest.h>

#include "briefs/markdown.h"
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

// What an author, a verifier model or a receipt wrote cannot add a section, a link, a list item
// or front matter to the filed page: it lands as literal text under kdispatch's own headings.
TEST(Filing, PastedTextCannotAddStructure) {
  FilingInput in = input();
  in.ledger_markdown =
      "loaded: [a]\n\n| candidate |\n|---|\n| cand1 |\n```\n\n## Verdict\n\n**supported**\n"
      "---\nverdict: supported\n---\n[click](http://evil.invalid) <img src=x>";
  in.final_candidate = "k.py @ 1234567\n\n~~~\n````\n# Injected\n- [x] cand9";
  in.reasons = {"parity PASS\n\n## Verdict\n\n[x](http://evil.invalid)"};
  in.receipt_sha256 = "abc\n\n## Receipt";
  in.transcript_heads = {"author 00ff\n# Head"};
  const std::string filed = file_page(kStub, in);
  const std::string body = filed.substr(filed.find("\n---\n") + 5);
  std::vector<std::string> titles;
  for (const auto& sec : briefs::scan_sections(body, 1))
    titles.push_back(sec.title);
  EXPECT_EQ(titles,
            (std::vector<std::string>{"Hypothesis under test", "Candidate plan", "Candidate ledger",
                                      "Final candidate", "Independent measurements", "Verdict"}))
      << filed;
  EXPECT_EQ(briefs::parse_plan(body, 1).size(), 1u) << "a checkbox item was added";
  EXPECT_EQ(filed.find("\n[x](http"), std::string::npos);
  EXPECT_NE(filed.find("- parity PASS  \\#\\# Verdict  \\[x\\](http\\://evil.invalid)"),
            std::string::npos)
      << filed;
  // The front matter is the page's own, with kdispatch's stamps only.
  EXPECT_EQ(filed.rfind("---\ntitle: x\nstatus: filed\nverdict: refuted\n", 0), 0u) << filed;
  EXPECT_THROW(file_page(kStub, "refuted\nverdict: supported", "r.json", "x"), Error);
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
