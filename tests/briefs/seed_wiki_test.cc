// The process pages of a wiki (tests/briefs/fixtures/process-wiki: index, BRIEFS, the mechanics
// page, one class page per category) combined with a family binding, a stub and doc
// distillations made here: exactly which sections are pasted, and which are never.
#include <gtest/gtest.h>

#include <filesystem>

#include "briefs/brief.h"
#include "briefs/page.h"
#include "common/files.h"
#include "examples/example_wiki.h"
#include "tests/support/process.h"

namespace fs = std::filesystem;

namespace kd::briefs {
namespace {

fs::path fixture() {
  return fs::path(KD_SOURCE_DIR) / "tests/briefs/fixtures/process-wiki";
}

class SeedWiki : public ::testing::Test {
 protected:
  void SetUp() override {
    wiki_ = fs::path(tmp_.path()) / "wiki";
    fs::create_directories(wiki_);
    fs::copy(fixture() / "wiki", wiki_ / "wiki", fs::copy_options::recursive);
    write("wiki/kernel_experiments/layer-norm/pallas/program.md",
          "---\nfamily: layer-norm\nhome_repo: normlib\nreference: normlib/ref.py\n"
          "target: normlib/layer_norm.py\nintegration_branch: kernels\nparity_spec: bit-exact\n"
          "op_point: b8-s4096-d4096-bf16\nhardware: v6e-1\nchip: \"1\"\ncampaign_tag: "
          "seedtest\n---\n");
    write(
        "wiki/kernel_experiments/layer-norm/pallas/2026-07-30-v001-layer-norm.md",
        "---\nstatus: in_progress\nactivity: capability-eval\nintervention_class: kernel-authored\n"
        "category: streaming-reduction\nclass page: wiki/kernels/classes/streaming-reduction.md\n"
        "lever queue: [one-pass]\nvariant: b8-s4096-d4096-bf16/v6e-1\nbar: 1.05\n"
        "created: 2026-07-30\n---\n\n## Hypothesis under test\n\n**Hypothesis:** h\n\n"
        "**Mechanism:** m\n\n**Predicted signal:** s\n\n**Falsification criterion:** below 1.05\n\n"
        "## K1 diagnosis\n\nTwo HBM passes; memory bound.\n\n## Candidate plan\n\n"
        "- [ ] cand1: fused pass — predict 1.3x\n");
    for (const char* d : {"pallas-tpu-details", "pallas-quickstart", "pallas-grid-blockspec",
                          "pallas-tpu-pipelining", "pallas-pipelining"})
      write(std::string("wiki/codebases/jax/doc-concepts/") + d + ".md",
            std::string("---\ntitle: ") + d + "\n---\n\nDistilled notes on " + d + ".\n");
    write(".gitignore", "/raw/\n");
    examples::commit_example(wiki_, "main", "process pages with a test family");
    write("raw/code/normlib/normlib/ref.py", "def workload(x):\n    return x\n");
    examples::commit_example(wiki_ / "raw/code/normlib", "kernels", "reference");
  }
  void write(const std::string& rel, const std::string& text) {
    fs::create_directories((wiki_ / rel).parent_path());
    write_file_atomic(wiki_ / rel, text);
  }
  BriefOutcome build() { return build_brief({wiki_, "layer-norm", "v001", {}, {}}); }

  test::TempDir tmp_;
  fs::path wiki_;
};

TEST_F(SeedWiki, AMechanicsPageWithoutDebuggingIsNamedNeverPastedEmpty) {
  BriefOutcome out = build();
  ASSERT_FALSE(out.brief);
  ASSERT_EQ(out.problems.size(), 1u) << render_problems(out.problems);
  EXPECT_EQ(
      out.problems[0],
      (Problem{"required reading", "wiki/concepts/pallas-kernel.md has no section \"Debugging\""}));
}

TEST_F(SeedWiki, ExactlyTheMandatedIndexSectionsArePasted) {
  std::string mech = read_file(wiki_ / "wiki/concepts/pallas-kernel.md");
  size_t see_also = mech.find("## See also");
  ASSERT_NE(see_also, std::string::npos);
  mech.insert(see_also, "## Debugging\n\nTEST-DEBUGGING: run interpret mode first.\n\n");
  write("wiki/concepts/pallas-kernel.md", mech);
  examples::commit_example(wiki_, "main", "add a Debugging section");

  BriefOutcome out = build();
  ASSERT_TRUE(out.brief) << render_problems(out.problems);
  const Brief& b = *out.brief;
  // The policy names each section; the page's heading may add its own parenthetical.
  std::vector<std::string> index_sections;
  for (const auto& p : b.reading)
    if (p.source == "wiki/kernel-optimization-index.md") index_sections.push_back(p.section);
  EXPECT_EQ(
      index_sections,
      (std::vector<std::string>{
          "The core thesis", "Generation scope (what carries over to the next chip)",
          "The three sinks of lost time (with the fix for each)",
          "THE WORKFLOW (each step feeds the next)", "Pick the intervention class (cheapest first)",
          "Kernel categories → the routing table (category to class page)", "Tiling theory",
          "The dispatch / orchestration floor",
          "Parity & measurement discipline → the earned rules are in BRIEFS",
          "Reading the profile: bound → lever"}));
  // A section runs to the next heading of its level: its subsections come along.
  EXPECT_NE(b.reading[6].content.find("### Picking a block shape"), std::string::npos);
  EXPECT_EQ(b.reading[6].content.find("orchestration floor"), std::string::npos);
  std::string md = b.markdown();
  EXPECT_EQ(md.find("NOT-PASTED"), std::string::npos);
  for (const char* absent : {"## Load mandate", "## Hardware envelope", "## Operational gotchas",
                             "## Kernel catalog", "## Sources", "## Read order for a new run",
                             "## Cardinal rule", "## Regeneration", "the **router** of"})
    EXPECT_EQ(md.find(absent), std::string::npos) << absent;

  // pallas-kernel.md through Debugging, not its See also / Sources tail.
  const PastedPart& m = b.reading[10];
  EXPECT_EQ(m.source, "wiki/concepts/pallas-kernel.md");
  EXPECT_EQ(m.section, "start through Debugging");
  EXPECT_NE(m.content.find("TEST-DEBUGGING"), std::string::npos);
  EXPECT_NE(m.content.find("## Memory spaces"), std::string::npos);
  EXPECT_EQ(m.content.find("## See also"), std::string::npos);
  EXPECT_EQ(m.content.find("## Sources"), std::string::npos);
  EXPECT_EQ(m.content.find("title:"), std::string::npos);  // front matter is never pasted

  // BRIEFS whole, its fenced '#' lines included; sections 1 and 3 for the verifier.
  const PastedPart& rules = b.reading[11];
  EXPECT_EQ(rules.source, "wiki/kernel_experiments/BRIEFS.md");
  EXPECT_EQ(rules.content, [&] {
    std::string s = read_file(wiki_ / "wiki/kernel_experiments/BRIEFS.md");
    while (!s.empty() && s.back() == '\n')
      s.pop_back();
    return s;
  }());
  ASSERT_EQ(b.verifier_reading.size(), 2u);
  EXPECT_EQ(b.verifier_reading[0].section, "1. MEASUREMENT (one timing helper for every number)");
  // The fenced '# 4. PARITY' line is code, so section 1 runs on through the whole helper.
  EXPECT_NE(b.verifier_reading[0].content.find("```python"), std::string::npos);
  EXPECT_NE(b.verifier_reading[0].content.find("return sorted(times)"), std::string::npos);
  EXPECT_EQ(b.verifier_reading[0].content.find("# 2. K1"), std::string::npos);
  EXPECT_EQ(b.verifier_reading[1].section, "3. AUTHOR DISCIPLINE (binding)");
  EXPECT_NE(b.verifier_reading[1].content.find("## Sweeps"), std::string::npos);
  EXPECT_EQ(b.verifier_reading[1].content.find("# 4. PARITY & ORACLES"), std::string::npos);

  EXPECT_EQ(b.reading[12].source, "wiki/kernels/classes/streaming-reduction.md");
  EXPECT_EQ(b.reading.size(), 18u);
  // This wiki's streaming-reduction page has no verified levers: a named warning.
  EXPECT_EQ(b.warnings, (std::vector<std::string>{
                            "activity is capability-eval but the binding lists no no_peek paths",
                            "class page wiki/kernels/classes/streaming-reduction.md has no section "
                            "\"Levers (verified)\""}));
  EXPECT_EQ(b.chip.id, "1");
  EXPECT_EQ(b.binding.target, std::vector<std::string>{"normlib/layer_norm.py"});
}

TEST(SeedPages, EveryProcessPageParses) {
  int pages = 0;
  for (auto& e : fs::recursive_directory_iterator(fixture() / "wiki")) {
    if (e.path().extension() != ".md") continue;
    SCOPED_TRACE(e.path().string());
    Page p = parse_page(read_file(e.path()), e.path().filename().string());
    EXPECT_FALSE(p.body.empty());
    EXPECT_FALSE(p.sections.empty());
    ++pages;
  }
  EXPECT_EQ(pages, 11);  // the index, mechanics, BRIEFS, program and seven class pages
}

}  // namespace
}  // namespace kd::briefs
