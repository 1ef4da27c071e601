// The rule table and the policy file: one id per rule, the shipped policy and docs/audit.md agree
// with the table, and a bad policy is refused naming the key.
#include "audit/policy.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "audit/rules.h"
#include "common/errors.h"
#include "common/files.h"
#include "tests/support/fixtures.h"

namespace kd::audit {
namespace {

using nlohmann::json;

std::string source(const std::string& rel) {
  return std::string(KD_SOURCE_DIR) + "/" + rel;
}

TEST(AuditRuleTable, EachRuleHasOneIdAndItsTexts) {
  std::set<std::string_view> ids;
  for (size_t i = 0; i < kRuleCount; ++i) {
    const AuditRule& r = audit_rule(static_cast<Rule>(i));
    EXPECT_EQ(static_cast<size_t>(r.rule), i);
    EXPECT_TRUE(ids.insert(r.id).second) << r.id;
    EXPECT_EQ(rule_by_id(r.id), r.rule);
    EXPECT_FALSE(r.correct.empty()) << r.id;
    EXPECT_FALSE(r.reread.empty()) << r.id;
  }
  EXPECT_EQ(rule_by_id("made_up"), std::nullopt);
  EXPECT_EQ(rule_by_id("Chain_Integrity"), std::nullopt);
  EXPECT_EQ(rule_id(Rule::SupportedWithoutPass), "supported_without_pass");
  // Only the chain and the line framing are judged without events.
  EXPECT_FALSE(audit_rule(Rule::ChainIntegrity).reads_events);
  EXPECT_FALSE(audit_rule(Rule::TranscriptTorn).reads_events);
  EXPECT_TRUE(audit_rule(Rule::StubOrder).reads_events);
}

TEST(AuditRuleTable, ShippedPolicyAndDocsGiveEachRuleItsDefaultSeverity) {
  AuditPolicy shipped = load_audit_policy(source("policies/audit.json"));
  std::string docs = read_file(source("docs/audit.md"));
  for (const auto& r : audit_rules()) {
    EXPECT_TRUE(shipped.enabled(r.rule)) << r.id;
    EXPECT_EQ(shipped.rule(r.rule).severity, r.default_severity) << r.id;
    std::string row = "| `" + std::string(r.id) + "` | " + severity_name(r.default_severity) + " |";
    EXPECT_NE(docs.find(row), std::string::npos) << row;
  }
  AuditPolicy built;  // a policy made in code starts from the table
  for (const auto& r : audit_rules())
    EXPECT_EQ(built.rule(r.rule).severity, r.default_severity) << r.id;
}

class BadAuditPolicy : public ::testing::Test {
 protected:
  json shipped = json::parse(read_file(source("policies/audit.json")));
  test::TempDir dir;

  std::string error_of(const json& doc) { return error_of_text(doc.dump()); }
  std::string error_of_text(const std::string& text) {
    std::string path = dir / "p.json";
    test::write_text(path, text);
    try {
      load_audit_policy(path);
    } catch (const Error& e) {
      std::string what = e.what();
      return what.rfind(path + ": ", 0) == 0 ? what.substr(path.size() + 2) : "unnamed: " + what;
    }
    return "accepted";
  }
};

TEST_F(BadAuditPolicy, IsRefusedNamingTheKey) {
  EXPECT_EQ(error_of(shipped), "accepted");
  json j = shipped;
  j["rules"]["made_up"] = {{"enabled", true}, {"severity", "DRIFT"}};
  EXPECT_EQ(error_of(j), "rules.made_up: unknown rule");
  j = shipped;
  j["rules"].erase("stub_order");
  EXPECT_EQ(error_of(j), "rules.stub_order is missing (every rule needs a switch)");
  j = shipped;
  j["rules"]["stub_order"]["severity"] = "SEVERE";
  EXPECT_EQ(error_of(j),
            "rules.stub_order.severity must be \"FABRICATION\", \"VIOLATION\", \"DRIFT\" or "
            "\"HYGIENE\"");
  j = shipped;
  j["rules"]["stub_order"].erase("enabled");
  EXPECT_EQ(error_of(j), "rules.stub_order.enabled must be true or false");
  j = shipped;
  j["rules"]["stub_order"]["enabeld"] = false;
  EXPECT_EQ(error_of(j), "rules.stub_order: unknown field \"enabeld\"");
  j = shipped;
  j["rules"]["stub_order"] = "on";
  EXPECT_EQ(error_of(j), "rules.stub_order must be an object");
  j = shipped;
  j["verdict_words"][1] = "";
  EXPECT_EQ(error_of(j), "verdict_words[1] must be a non-empty string");
  j = shipped;
  j.erase("allowed_write_roots");
  EXPECT_EQ(error_of(j), "allowed_write_roots must be an array of strings");
  j = shipped;
  j["max_findings_per_rule"] = 0;
  EXPECT_EQ(error_of(j), "max_findings_per_rule must be an integer from 1 to 1000000");
  j = shipped;
  j["max_rules"] = 3;
  EXPECT_EQ(error_of(j), "unknown field \"max_rules\"");
  EXPECT_EQ(error_of(json::array()), "top level must be an object");
  EXPECT_EQ(error_of_text("{").rfind("not JSON: ", 0), 0u) << error_of_text("{");
}

}  // namespace
}  // namespace kd::audit
