// The real seed pages (index, BRIEFS, class pages, the pallas-kernel stub) combined with a family
// binding, a stub and doc distillations made here: exactly which sections are pasted.
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

fs::path seed() {
  return fs::path(KD_SOURCE_DIR) / ".." / "shared" / "seed-wiki";
}

class SeedWiki : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(seed() / "wiki/kernel-optimization-index.md"))
      GTEST_SKIP() << "seed wiki not found at " << seed()
                   << "; these tests need ../shared/seed-wiki";
    wiki_ = fs::path(tmp_.path()) / "wiki";
    for (const char* rel :
         {"wiki/kernel-optimization-index.md", "wiki/kernel_experiments/BRIEFS.md",
          "wiki/concepts/pallas-kernel.md", "wiki/kernels/classes"}) {
      fs::create_directories((wiki_ / rel).parent_path());
      fs::copy(seed() / rel, wiki_ / rel, fs::copy_options::recursive);
    }
    // Seed files are read-only; the tests edit some of them.
    for (auto& e : fs::recursive_directory_iterator(wiki_))
      fs::permissions(e.path(), fs::perms::owner_write, fs::perm_options::add);
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
    examples::commit_example(wiki_, "main", "seed pages with a test family");
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

TEST_F(SeedWiki, ThePallasKernelStubWithoutDebuggingIsNamedNeverPastedEmpty) {
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
  std::vector<std::string> index_sections;
  for (const auto& p : b.reading)
    if (p.source == "wiki/kernel-optimization-index.md") index_sections.push_back(p.section);
  EXPECT_EQ(index_sections,
            (std::vector<std::string>{
                "The core thesis", "Generation scope (what transfers, what to re-derive)",
                "The three sinks of lost time (and their canonical fixes)",
                "THE WORKFLOW (and why the order is the order)",
                "Pick the intervention class (the load-bearing decision)",
                "Kernel categories → the routing table (which class page an author loads)",
                "Tiling theory", "The dispatch / orchestration floor",
                "Parity & measurement discipline → the earned rules are in BRIEFS",
                "Reading the profile: bound → lever"}));
  std::string md = b.markdown();
  for (const char* absent : {"## Load mandate", "## Hardware envelope", "## Operational gotchas",
                             "## Kernel catalog", "## Sources", "## Read order for a new run",
                             "## Cardinal rule", "## Regeneration", "This file is the **router**"})
    EXPECT_EQ(md.find(absent), std::string::npos) << absent;

  // pallas-kernel.md through Debugging, not its See also / Sources tail.
  const PastedPart& m = b.reading[10];
  EXPECT_EQ(m.source, "wiki/concepts/pallas-kernel.md");
  EXPECT_EQ(m.section, "start through Debugging");
  EXPECT_NE(m.content.find("TEST-DEBUGGING"), std::string::npos);
  EXPECT_EQ(m.content.find("## See also"), std::string::npos);
  EXPECT_EQ(m.content.find("## Sources"), std::string::npos);

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
  EXPECT_EQ(b.verifier_reading[0].section.substr(0, 14), "1. MEASUREMENT");
  EXPECT_NE(b.verifier_reading[0].content.find("```python"), std::string::npos);
  EXPECT_EQ(b.verifier_reading[0].content.find("# 2. K1"), std::string::npos);
  EXPECT_EQ(b.verifier_reading[1].section, "3. AUTHOR DISCIPLINE (binding)");

  EXPECT_EQ(b.reading[12].source, "wiki/kernels/classes/streaming-reduction.md");
  EXPECT_EQ(b.reading.size(), 18u);
  // The seed's streaming-reduction page has no verified levers: a named warning.
  EXPECT_EQ(b.warnings, (std::vector<std::string>{
                            "activity is capability-eval but the binding lists no no_peek paths",
                            "class page wiki/kernels/classes/streaming-reduction.md has no section "
                            "\"Levers (verified)\""}));
  EXPECT_EQ(b.chip.id, "1");
  EXPECT_EQ(b.binding.target, std::vector<std::string>{"normlib/layer_norm.py"});
}

TEST(SeedPages, EverySeedMarkdownPageParses) {
  if (!fs::exists(seed())) GTEST_SKIP() << "seed wiki not found at " << seed();
  int pages = 0;
  for (auto& e : fs::recursive_directory_iterator(seed())) {
    if (e.path().extension() != ".md") continue;
    SCOPED_TRACE(e.path().string());
    Page p = parse_page(read_file(e.path()), e.path().filename().string());
    EXPECT_FALSE(p.body.empty());
    ++pages;
  }
  EXPECT_GE(pages, 15);
}

}  // namespace
}  // namespace kd::briefs
