#include "briefs/verifier_brief.h"

#include <gtest/gtest.h>

#include "examples/example_wiki.h"
#include "tests/support/process.h"

namespace kd::briefs {
namespace {

class VerifierBriefTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ex_ = examples::materialize_example(tmp_ / "wiki");
    BriefOutcome out = build_brief({ex_.wiki, "rms-norm", "v002", {}, {}});
    ASSERT_TRUE(out.brief) << render_problems(out.problems);
    author_ = *out.brief;
    in_.wiki = ex_.wiki;
    in_.reference = "/snap/normkit/reference.py";
    in_.candidate = "/snap/normkit/rms_norm.py";
    in_.chip =
        contract::Chip{"1", "tpu", "/tmp/tpu-chip-1.lock", {{"TPU_VISIBLE_DEVICES", "1"}}, {}};
    in_.artifact_dir = "/runs/example/rms-norm-v002/verifier";
  }
  test::TempDir tmp_;
  examples::MaterializedExample ex_;
  Brief author_;
  VerifierInputs in_;
};

TEST_F(VerifierBriefTest, CarriesTheVerifierFieldsAndBriefsSectionsOneAndThree) {
  in_.author_claim = "p50 0.41 ms, 1.07x";
  VerifierBriefOutcome out = make_verifier_brief(author_, in_);
  ASSERT_TRUE(out.brief) << render_problems(out.problems);
  const VerifierBrief& v = *out.brief;
  EXPECT_EQ(v.experiment_page, ex_.wiki / author_.stub.path);
  EXPECT_EQ(v.parity_spec, "atol=1e-5 rtol=1e-5");
  EXPECT_DOUBLE_EQ(v.bar, 1.02);
  EXPECT_EQ(v.mode, "screen");
  EXPECT_EQ(v.author_brief_sha256, author_.sha256());
  ASSERT_EQ(v.reading.size(), 2u);
  EXPECT_EQ(v.reading[0].section, "1. MEASUREMENT (the canonical timing helper)");
  EXPECT_EQ(v.reading[1].section, "3. AUTHOR DISCIPLINE (binding)");
  EXPECT_TRUE(v.warnings.empty());
  std::string md = v.markdown();
  EXPECT_NE(md.find("| candidate_path | `/snap/normkit/rms_norm.py` |"), std::string::npos);
  EXPECT_NE(md.find("p50 0.41 ms, 1.07x (author-side, not your numbers)"), std::string::npos);
  // Only the verifier's slice of the reading: nothing from the author's pasted pack.
  EXPECT_EQ(md.find("# 2. K1 BOUND DIAGNOSIS"), std::string::npos);
  EXPECT_EQ(md.find("## The core thesis"), std::string::npos);
  EXPECT_EQ(md, make_verifier_brief(author_, in_).brief->markdown());
  EXPECT_EQ(v.json()["markdown_sha256"], v.sha256());
}

TEST_F(VerifierBriefTest, MissingOrInvalidFieldsAreAllNamed) {
  in_.candidate.clear();
  in_.artifact_dir = "relative/dir";
  in_.mode = "thorough";
  in_.chip = {};
  VerifierBriefOutcome out = make_verifier_brief(author_, in_);
  EXPECT_FALSE(out.brief);
  Problems want = {{"candidate_path", "missing"},
                   {"artifact_dir", "\"relative/dir\" must be an absolute path"},
                   {"chip", "missing"},
                   {"mode", "\"thorough\" is neither screen nor full"}};
  EXPECT_EQ(out.problems, want);
}

TEST_F(VerifierBriefTest, SameChipAsTheAuthorIsAWarning) {
  in_.chip = author_.chip;
  VerifierBriefOutcome out = make_verifier_brief(author_, in_);
  ASSERT_TRUE(out.brief);
  EXPECT_EQ(out.brief->warnings,
            std::vector<std::string>{
                "the verifier runs on the author's chip \"0\" (no other chip was free)"});
}

}  // namespace
}  // namespace kd::briefs
