#include "briefs/load_mandate.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "common/files.h"
#include "common/policy_path.h"

namespace kd::briefs {
namespace {

TEST(LoadMandate, DefaultPolicyMatchesTheSeedMandate) {
  LoadMandate m = load_default_load_mandate();
  EXPECT_EQ(m.index_path, "wiki/kernel-optimization-index.md");
  EXPECT_EQ(m.mechanics_path, "wiki/concepts/pallas-kernel.md");
  EXPECT_EQ(m.mechanics_through, "Debugging");
  EXPECT_EQ(m.routing_table, "Kernel categories → the routing table");
  EXPECT_EQ(m.rules_path, "wiki/kernel_experiments/BRIEFS.md");
  EXPECT_EQ(m.categories(),
            (std::vector<std::string>{"attention", "cross-chip-collective", "dense-near-roofline",
                                      "gemm-conv-epilogue", "grouped-ragged-indirection",
                                      "state-carry-scan", "streaming-reduction"}));
  EXPECT_EQ(m.class_page("attention"), "wiki/kernels/classes/attention.md");
  auto d = m.distillations("streaming-reduction");
  EXPECT_NE(
      std::find(d.begin(), d.end(), "wiki/codebases/jax/doc-concepts/pallas-tpu-pipelining.md"),
      d.end());
  EXPECT_EQ(d.front(), "wiki/codebases/jax/doc-concepts/pallas-tpu-details.md");
  EXPECT_TRUE(m.forbidden("wiki/kernel_experiments/retrospectives-digest.md"));
  EXPECT_TRUE(m.forbidden("wiki/kernel_experiments/verified_briefs/a/b.md"));
  EXPECT_TRUE(m.forbidden("wiki/kernel_experiments/gemm/pallas/2026-07-12-v002-gemm.md"));
  EXPECT_FALSE(m.forbidden("wiki/kernel_experiments/gemm/pallas/program.md"));
  EXPECT_FALSE(m.forbidden("wiki/kernel_experiments/BRIEFS.md"));
}

nlohmann::json default_json() {
  return nlohmann::json::parse(read_file(policy_file("load-mandate.json")));
}

void expect_refused(const nlohmann::json& j, const std::string& fragment) {
  try {
    parse_load_mandate(j.dump(), "load-mandate.json");
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(LoadMandate, BrokenPoliciesAreRefusedNamingTheField) {
  auto j = default_json();
  j["index"]["sections"][2] = "";
  expect_refused(j, "load-mandate.json: index.sections[2] must be a non-empty string");
  j = default_json();
  j.erase("mechanics");
  expect_refused(j, "mechanics must be an object");
  j = default_json();
  j["class_page"]["path"] = "wiki/kernels/classes/x.md";
  expect_refused(j, "class_page.path must contain {category}");
  j = default_json();
  j["rules"]["path"] = "../outside.md";
  expect_refused(j, "rules.path must be a wiki-relative path");
  j = default_json();
  j["distillations"]["by_category"]["Bad Slug"] = nlohmann::json::array();
  expect_refused(j, "is not a category slug");
  // A mandate that pastes what it also forbids fails closed.
  j = default_json();
  j["rules"]["path"] = "wiki/kernel_experiments/retrospectives-digest.md";
  expect_refused(j, "rules.path would paste \"wiki/kernel_experiments/retrospectives-digest.md\"");
  expect_refused(nlohmann::json::array(), "top level must be an object");
  try {
    parse_load_mandate("{not json", "load-mandate.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not valid JSON"), std::string::npos);
  }
}

}  // namespace
}  // namespace kd::briefs
