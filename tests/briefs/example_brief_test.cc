// The brief on the shipped example wiki: the complete family, determinism, and one refusal per
// reason (examples/refusal-cases/), each named exactly.
#include <gtest/gtest.h>

#include <filesystem>

#include "briefs/brief.h"
#include "briefs/experiment.h"
#include "common/files.h"
#include "common/sha256.h"
#include "examples/example_wiki.h"
#include "tests/support/process.h"

namespace fs = std::filesystem;

namespace kd::briefs {
namespace {

using examples::commit_example;
using examples::materialize_example;

const std::string kStub = "wiki/kernel_experiments/rms-norm/pallas/2026-11-30-v002-rms-norm.md";
const std::string kBinding = "wiki/kernel_experiments/rms-norm/pallas/program.md";

BriefOutcome build(const fs::path& wiki) {
  return build_brief({wiki, examples::kExampleFamily, examples::kExampleExperiment, {}, {}});
}

std::string problems_text(const Problems& ps) {
  return render_problems(ps);
}

void replace_in(const fs::path& file, const std::string& from, const std::string& to) {
  std::string s = read_file(file);
  size_t at = s.find(from);
  ASSERT_NE(at, std::string::npos) << from << " not in " << file;
  s.replace(at, from.size(), to);
  write_file_atomic(file, s);
}

TEST(ExampleBrief, ResolvesAllTenItems) {
  test::TempDir tmp;
  auto ex = materialize_example(tmp / "wiki");
  BriefOutcome out = build(ex.wiki);
  ASSERT_TRUE(out.brief) << problems_text(out.problems);
  const Brief& b = *out.brief;
  EXPECT_EQ(b.wiki_commit, ex.wiki_commit);
  EXPECT_EQ(b.binding.reference, "normkit/reference.py");
  EXPECT_EQ(b.reference_sha256, sha256_hex(read_file(fs::path(tmp / "wiki") /
                                                     "raw/code/normkit/normkit/reference.py")));
  EXPECT_EQ(b.home_commit, ex.home_commit);
  EXPECT_EQ(b.binding.target, std::vector<std::string>{"normkit/rms_norm.py"});
  EXPECT_EQ(b.branch, "kernel/rms-norm-v002");
  EXPECT_EQ(b.worktree, "wiki/kernel_experiments/rms-norm/pallas/.repo");
  EXPECT_EQ(b.stub.path, kStub);
  EXPECT_EQ(b.stub.intervention_class, "kernel-authored");
  EXPECT_EQ(b.stub.k1_title, "K1 — bound diagnosis");
  EXPECT_NE(b.stub.k1.find("two full passes"), std::string::npos);
  ASSERT_TRUE(b.stub.bar);
  EXPECT_DOUBLE_EQ(*b.stub.bar, 1.02);
  EXPECT_NE(b.stub.falsification.find("at least 2%"), std::string::npos);
  EXPECT_EQ(b.binding.parity_spec, "atol=1e-5 rtol=1e-5");
  EXPECT_EQ(b.chip.id, "0");
  EXPECT_EQ(b.chip.lock, "/tmp/tpu-chip-0.lock");
  EXPECT_EQ(b.stub.activity, "optimization");
  EXPECT_EQ(b.binding.no_peek, std::vector<std::string>{"raw/code/normkit/solutions/**"});
  ASSERT_EQ(b.stub.plan.size(), 3u);
  EXPECT_EQ(b.stub.plan[2].id, "cand3");
  EXPECT_EQ(b.stub.plan[2].prediction, "no gain over cand2 (cache pressure)");
  EXPECT_TRUE(b.warnings.empty());

  std::vector<std::pair<std::string, std::string>> parts;
  for (const auto& p : b.reading) {
    parts.emplace_back(p.source, p.section);
    EXPECT_EQ(p.sha256, sha256_hex(p.content));
  }
  const std::string idx = "wiki/kernel-optimization-index.md";
  const std::string dist = "wiki/codebases/jax/doc-concepts/";
  std::vector<std::pair<std::string, std::string>> want = {
      {idx, "The core thesis"},
      {idx, "Generation scope (what transfers, what to re-derive)"},
      {idx, "The three sinks of lost time (and their canonical fixes)"},
      {idx, "THE WORKFLOW (and why the order is the order)"},
      {idx, "Pick the intervention class (the load-bearing decision)"},
      {idx, "Kernel categories → the routing table (which class page an author loads)"},
      {idx, "Tiling theory"},
      {idx, "The dispatch / orchestration floor"},
      {idx, "Parity & measurement discipline → the earned rules are in BRIEFS"},
      {idx, "Reading the profile: bound → lever"},
      {"wiki/concepts/pallas-kernel.md", "start through Debugging"},
      {"wiki/kernel_experiments/BRIEFS.md", "(whole page)"},
      {"wiki/kernels/classes/streaming-reduction.md", "(whole page)"},
      {dist + "pallas-tpu-details.md", "(whole page)"},
      {dist + "pallas-quickstart.md", "(whole page)"},
      {dist + "pallas-grid-blockspec.md", "(whole page)"},
      {dist + "pallas-tpu-pipelining.md", "(whole page)"},
      {dist + "pallas-pipelining.md", "(whole page)"}};
  EXPECT_EQ(parts, want);
  const std::string& mech = b.reading[10].content;
  EXPECT_NE(mech.find("## Debugging\n\nRun with `interpret=True`"), std::string::npos);
  EXPECT_EQ(mech.find("## See also"), std::string::npos);
  EXPECT_EQ(mech.find("title:"), std::string::npos);  // front matter is never pasted

  std::string md = b.markdown();
  for (const char* never :
       {"WARM-TIER-ANSWER", "PAST-EXPERIMENT-PAGE", "## Load mandate", "## Hardware envelope",
        "## Operational gotchas", "## Sources", "## Read order", "## Cardinal rule"})
    EXPECT_EQ(md.find(never), std::string::npos) << never;
  for (int i = 1; i <= 10; ++i)
    EXPECT_NE(md.find("\n## " + std::to_string(i) + ". "), std::string::npos) << i;
  ASSERT_EQ(b.verifier_reading.size(), 2u);
  EXPECT_EQ(b.verifier_reading[0].section, "1. MEASUREMENT (the canonical timing helper)");
  EXPECT_NE(b.verifier_reading[0].content.find("# Not a heading"), std::string::npos);
  EXPECT_EQ(b.verifier_reading[1].section, "3. AUTHOR DISCIPLINE (binding)");
  EXPECT_NE(b.verifier_reading[1].content.find("## Sweeps"), std::string::npos);
}

TEST(ExampleBrief, SameWikiStateGivesByteIdenticalOutput) {
  test::TempDir a, c;
  auto ea = materialize_example(a / "wiki");
  auto ec = materialize_example(c / "wiki");
  EXPECT_EQ(ea.wiki_commit, ec.wiki_commit);
  BriefOutcome oa = build(ea.wiki), oa2 = build(ea.wiki), oc = build(ec.wiki);
  ASSERT_TRUE(oa.brief && oa2.brief && oc.brief);
  EXPECT_EQ(oa.brief->markdown(), oa2.brief->markdown());
  EXPECT_EQ(oa.brief->markdown(), oc.brief->markdown());
  EXPECT_EQ(oa.brief->json().dump(), oc.brief->json().dump());
  EXPECT_EQ(oa.brief->sha256(), sha256_hex(oa.brief->markdown()));
  EXPECT_EQ(oa.brief->json()["markdown_sha256"], oa.brief->sha256());
  // A committed change is a new wiki state and a new brief.
  replace_in(ec.wiki / kStub, "64-row blocks", "32-row blocks");
  commit_example(ec.wiki, "main", "K3(rms-norm v002): stub — revise cand1");
  BriefOutcome changed = build(ec.wiki);
  ASSERT_TRUE(changed.brief) << problems_text(changed.problems);
  EXPECT_NE(changed.brief->sha256(), oa.brief->sha256());
}

TEST(ExampleBrief, EachRefusalCaseIsNamedExactly) {
  auto cases = examples::example_refusal_cases();
  ASSERT_GE(cases.size(), 12u);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    test::TempDir tmp;
    auto ex = materialize_example(tmp / "wiki", {c.name});
    BriefOutcome out = build(ex.wiki);
    EXPECT_FALSE(out.brief);
    ASSERT_EQ(out.problems.size(), 1u) << problems_text(out.problems);
    EXPECT_EQ(out.problems[0].item, c.item);
    EXPECT_EQ(out.problems[0].reason.substr(0, c.reason.size()), c.reason);
  }
}

TEST(ExampleBrief, EveryProblemIsNamedAtOnce) {
  test::TempDir tmp;
  auto ex = materialize_example(tmp / "wiki");
  fs::path w = ex.wiki;
  replace_in(w / kStub, "bar: 1.02\n", "bar: lots\n");
  replace_in(w / kStub, "## K1 — bound diagnosis", "## Background");
  replace_in(w / kStub, "— predict no gain over cand2 (cache pressure)", "");
  replace_in(w / kBinding, "parity_spec: atol=1e-5 rtol=1e-5\n", "parity_spec: close enough\n");
  replace_in(w / kBinding, "campaign_tag: example\n", "");
  replace_in(w / "wiki/concepts/pallas-kernel.md", "## Debugging", "## Troubleshooting");
  fs::remove(w / "wiki/kernels/classes/streaming-reduction.md");
  commit_example(w, "main", "break many things");
  BriefOutcome out = build(w);
  ASSERT_FALSE(out.brief);
  Problems want = {
      {"binding", kBinding + " lacks required keys: campaign_tag"},
      {"parity_spec",
       kBinding + ": \"close enough\" is neither \"atol=<x> rtol=<y>\" nor \"bit-exact\""},
      {"falsification bar", kStub + ": bar \"lots\" is not a positive number"},
      {"diagnosis", kStub + " has no K1 section (the bound diagnosis)"},
      {"candidate plan", kStub + ":39: cand3 has no prediction"},
      {"required reading", "wiki/concepts/pallas-kernel.md has no section \"Debugging\""},
      {"required reading", "class page wiki/kernels/classes/streaming-reduction.md not found"}};
  EXPECT_EQ(out.problems, want) << problems_text(out.problems);
}

TEST(ExampleBrief, OtherPagesWithUncommittedEditsUseTheCommittedVersionAndWarn) {
  test::TempDir tmp;
  auto ex = materialize_example(tmp / "wiki");
  replace_in(ex.wiki / "wiki/kernels/classes/streaming-reduction.md", "One pass per row block",
             "UNCOMMITTED-EDIT");
  BriefOutcome out = build(ex.wiki);
  ASSERT_TRUE(out.brief) << problems_text(out.problems);
  EXPECT_EQ(out.brief->markdown().find("UNCOMMITTED-EDIT"), std::string::npos);
  EXPECT_NE(out.brief->markdown().find("One pass per row block"), std::string::npos);
  EXPECT_EQ(out.brief->warnings,
            std::vector<std::string>{"wiki/kernels/classes/streaming-reduction.md has uncommitted "
                                     "edits; the committed version is used"});
}

TEST(ExampleBrief, ClassPageWithoutVerifiedLeversIsAWarningNotARefusal) {
  test::TempDir tmp;
  auto ex = materialize_example(tmp / "wiki");
  replace_in(ex.wiki / "wiki/kernels/classes/streaming-reduction.md", "## Levers (verified)",
             "## Levers (candidates)");
  commit_example(ex.wiki, "main", "levers not yet verified");
  BriefOutcome out = build(ex.wiki);
  ASSERT_TRUE(out.brief) << problems_text(out.problems);
  EXPECT_EQ(
      out.brief->warnings,
      std::vector<std::string>{"class page wiki/kernels/classes/streaming-reduction.md has no "
                               "section \"Levers (verified)\""});
  EXPECT_NE(out.brief->markdown().find("## Warnings\n\n- class page"), std::string::npos);
}

TEST(ExampleBrief, CommittedSymlinkLeavingTheWikiIsRefusedEvenWhenAbsentOnDisk) {
  test::TempDir tmp;
  auto ex = materialize_example(tmp / "wiki", {"symlink-outside-wiki"});
  fs::remove(ex.wiki / "wiki/kernels/classes/streaming-reduction.md");
  BriefOutcome out = build(ex.wiki);
  ASSERT_EQ(out.problems.size(), 1u) << problems_text(out.problems);
  EXPECT_EQ(out.problems[0].reason,
            "class page wiki/kernels/classes/streaming-reduction.md is a symlink leading outside "
            "the wiki (\"../../../../outside-the-wiki.md\")");
}

TEST(ExampleBrief, SymlinkInsideTheWikiIsFollowed) {
  test::TempDir tmp;
  auto ex = materialize_example(tmp / "wiki");
  fs::path cls = ex.wiki / "wiki/kernels/classes/streaming-reduction.md";
  fs::rename(cls, ex.wiki / "wiki/kernels/classes/reduction-impl.md");
  fs::create_symlink("reduction-impl.md", cls);
  commit_example(ex.wiki, "main", "class page moved behind a link");
  BriefOutcome out = build(ex.wiki);
  ASSERT_TRUE(out.brief) << problems_text(out.problems);
  EXPECT_NE(out.brief->markdown().find("One pass per row block"), std::string::npos);
}

TEST(ExampleBrief, StubFieldsAreValidated) {
  test::TempDir tmp;
  auto ex = materialize_example(tmp / "wiki");
  replace_in(ex.wiki / kStub, "status: in_progress", "status: filed");
  replace_in(ex.wiki / kStub, "activity: optimization", "activity: sightseeing");
  replace_in(ex.wiki / kStub, "intervention_class: kernel-authored", "intervention_class: magic");
  replace_in(ex.wiki / kStub, "**Mechanism:**", "Mechanism:");
  replace_in(ex.wiki / kStub, "class page: kernels/classes/streaming-reduction.md",
             "class page: kernels/classes/attention.md");
  commit_example(ex.wiki, "main", "bad stub");
  BriefOutcome out = build(ex.wiki);
  Problems want = {
      {"stub", kStub + ": status is \"filed\"; only an in_progress experiment is dispatched"},
      {"activity", kStub + ": activity \"sightseeing\" is not optimization or capability-eval"},
      {"diagnosis", kStub + ": intervention_class \"magic\" is not refute, flag, xla-rewrite or "
                            "kernel-authored"},
      {"stub", kStub + ": \"Hypothesis under test\" has no **Mechanism** paragraph"},
      {"required reading",
       kStub + ": class page \"kernels/classes/attention.md\" does not name "
               "wiki/kernels/classes/streaming-reduction.md (the routing table's page for "
               "streaming-reduction)"}};
  EXPECT_EQ(out.problems, want) << problems_text(out.problems);
}

TEST(ExampleBrief, MissingExperimentAndNonRepositoryWikiAreRefused) {
  test::TempDir tmp;
  auto ex = materialize_example(tmp / "wiki");
  BriefOutcome out = build_brief({ex.wiki, "rms-norm", "v007", {}, {}});
  ASSERT_EQ(out.problems.size(), 1u) << problems_text(out.problems);
  EXPECT_EQ(
      out.problems[0].reason,
      "no experiment page wiki/kernel_experiments/rms-norm/pallas/<YYYY-MM-DD>-v007-<slug>.md");
  BriefOutcome bad = build_brief({ex.wiki, "../rms-norm", "v2", {}, {}});
  EXPECT_EQ(bad.problems,
            (Problems{{"request", "family \"../rms-norm\" is not a slug of [a-z0-9-]"},
                      {"request", "experiment \"v2\" is not vNNN"}}));
  fs::create_directories(tmp / "plain");
  BriefOutcome none = build_brief({tmp / "plain", "rms-norm", "v002", {}, {}});
  ASSERT_EQ(none.problems.size(), 1u);
  EXPECT_EQ(none.problems[0].item, "wiki");
}

TEST(ExampleBrief, PagesTheBriefDoesNotNeedAreNeverRead) {
  test::TempDir tmp;
  auto ex = materialize_example(tmp / "wiki");
  // A malformed page and an unreadable one elsewhere in the wiki change nothing.
  write_file_atomic(ex.wiki / "wiki/concepts/broken.md", "---\ntitle: [unterminated\n");
  write_file_atomic(ex.wiki / "wiki/concepts/secret.md", "---\ntitle: x\n---\n");
  commit_example(ex.wiki, "main", "unrelated pages");
  fs::permissions(ex.wiki / "wiki/concepts/secret.md", fs::perms::none);
  BriefOutcome out = build(ex.wiki);
  fs::permissions(ex.wiki / "wiki/concepts/secret.md", fs::perms::owner_all);
  ASSERT_TRUE(out.brief) << problems_text(out.problems);
  EXPECT_TRUE(out.brief->warnings.empty());
}

TEST(ExampleBrief, CrlfStubWithByteOrderMarkGivesTheSameItems) {
  test::TempDir tmp;
  auto ex = materialize_example(tmp / "wiki");
  BriefOutcome lf = build(ex.wiki);
  ASSERT_TRUE(lf.brief);
  std::string text = read_file(ex.wiki / kStub), crlf = "\xEF\xBB\xBF";
  for (char c : text)
    crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  write_file_atomic(ex.wiki / kStub, crlf);
  commit_example(ex.wiki, "main", "stub saved on another editor");
  BriefOutcome out = build(ex.wiki);
  ASSERT_TRUE(out.brief) << problems_text(out.problems);
  EXPECT_EQ(out.brief->stub.k1, lf.brief->stub.k1);
  EXPECT_EQ(out.brief->stub.falsification, lf.brief->stub.falsification);
  ASSERT_EQ(out.brief->stub.plan.size(), 3u);
  EXPECT_EQ(out.brief->stub.plan[0].prediction, lf.brief->stub.plan[0].prediction);
}

TEST(ExampleBrief, LoadExperimentReadsAFiledStubForTheAudit) {
  test::TempDir tmp;
  auto ex = materialize_example(tmp / "wiki");
  Experiment e = load_experiment(ex.wiki, "rms-norm", "v001");
  EXPECT_EQ(e.wiki_commit, ex.wiki_commit);
  ASSERT_TRUE(e.pages.binding && e.pages.stub);
  EXPECT_EQ(e.pages.binding->reference, "normkit/reference.py");
  EXPECT_EQ(e.pages.stub->verdict, "refuted");
  ASSERT_EQ(e.pages.stub->plan.size(), 1u);
  EXPECT_TRUE(e.pages.stub->plan[0].checked);
  // Only the dispatch-time rule fails for a filed experiment.
  ASSERT_EQ(e.problems.size(), 1u) << problems_text(e.problems);
  EXPECT_EQ(e.problems[0].reason,
            "wiki/kernel_experiments/rms-norm/pallas/2026-11-20-v001-rms-norm.md: status is "
            "\"filed\"; only an in_progress experiment is dispatched");
  Experiment bad = load_experiment(ex.wiki, "rms-norm/..", "v001");
  ASSERT_EQ(bad.problems.size(), 1u);
  EXPECT_EQ(bad.problems[0].item, "request");
}

TEST(ExampleBrief, ACategoryTheRoutingTableDoesNotNameIsAWarning) {
  test::TempDir tmp;
  auto ex = materialize_example(tmp / "wiki");
  replace_in(ex.wiki / "wiki/kernel-optimization-index.md",
             "| streaming-reduction | a large reduction over a materialized axis | "
             "kernels/classes/streaming-reduction.md |\n",
             "");
  commit_example(ex.wiki, "main", "routing table row dropped");
  BriefOutcome out = build(ex.wiki);
  ASSERT_TRUE(out.brief) << problems_text(out.problems);
  EXPECT_EQ(out.brief->warnings,
            std::vector<std::string>{"the routing table of wiki/kernel-optimization-index.md does "
                                     "not list category \"streaming-reduction\""});
}

}  // namespace
}  // namespace kd::briefs
