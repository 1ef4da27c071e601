#include <gtest/gtest.h>

#include <regex>

#include "agents/fake/script.h"
#include "agents/finish.h"
#include "agents/roles.h"
#include "agents/tools.h"
#include "common/errors.h"
#include "tests/support/process.h"

namespace kd::agents {
namespace {

using json = nlohmann::json;

TEST(AuthorTools, NineToolsWithPortableNamesAndObjectSchemas) {
  const auto& tools = author_tools();
  std::vector<std::string> names;
  for (const auto& t : tools) {
    names.push_back(t.name);
    EXPECT_TRUE(std::regex_match(t.name, std::regex("^[a-zA-Z0-9_-]{1,64}$")));
    EXPECT_FALSE(t.description.empty());
    EXPECT_EQ(t.input_schema["type"], "object");
    EXPECT_EQ(t.input_schema["additionalProperties"], false);
  }
  EXPECT_EQ(names,
            (std::vector<std::string>{"read_file", "list_dir", "write_file", "edit_file", "run",
                                      "run_on_chip", "git_diff", "commit", "finish"}));
}

std::optional<std::string> validate(const std::string& name, const json& input) {
  ToolCall c{"id", name, input, input.dump(), true};
  return validate_call(author_tools(), c);
}

TEST(AuthorTools, ValidationNamesEachProblem) {
  EXPECT_FALSE(validate("run", {{"command", {"ls", "-l"}}, {"timeout_s", 10}}));
  auto e = validate("run", {{"command", json::array()}, {"timeout_s", 0}, {"cwd", 3}});
  ASSERT_TRUE(e);
  EXPECT_NE(e->find("command needs at least 1 item(s)"), std::string::npos) << *e;
  EXPECT_NE(e->find("timeout_s must be at least 1"), std::string::npos) << *e;
  EXPECT_NE(e->find("cwd must be a string, got integer"), std::string::npos) << *e;
  e = validate("edit_file", {{"path", "a"}});
  ASSERT_TRUE(e);
  EXPECT_NE(e->find("old_text is required"), std::string::npos) << *e;
  EXPECT_NE(e->find("new_text is required"), std::string::npos) << *e;
  e = validate("run", {{"command", {"ls", 3}}});
  ASSERT_TRUE(e);
  EXPECT_NE(e->find("command[1] must be a string"), std::string::npos) << *e;
  e = validate("finish", {{"ledger", "x"}});
  ASSERT_TRUE(e);
  EXPECT_NE(e->find("final_candidate is required"), std::string::npos) << *e;
}

const char* kGoodLedger =
    "loaded: [index, BRIEFS]\n"
    "| candidate | class | committed SHA | parity (max abs / max rel) | p50 ms (author-side) | vs "
    "naive | receipt | why kept/rejected |\n"
    "|---|---|---|---|---|---|---|---|\n"
    "| cand1 | kernel-authored | 0123456789abcdef0123456789abcdef01234567 | 0 / 0 | 1.0 | 1.1x | "
    "r/cand1.json | kept |\n"
    "| cand2 | kernel-authored | - | n/a | n/a | n/a | - | did not compile |\n";

json finish_input() {
  return {{"ledger", kGoodLedger},
          {"final_candidate",
           {{"path", "k/cand1.py"}, {"sha", "0123456789abcdef0123456789abcdef01234567"}}},
          {"mechanism", "one pass"},
          {"escalations", json::array()},
          {"blockers", json::array()},
          {"compliance", ""}};
}

TEST(Finish, AProperContractIsAccepted) {
  FinishContext ctx;
  ctx.plan_ids = {"cand1", "cand2"};
  auto problems = check_finish(finish_input(), ctx);
  EXPECT_TRUE(problems.empty()) << finish_rejection(problems);
}

TEST(Finish, UnrunPlanItemsMustBeAbandonedWithAReason) {
  FinishContext ctx;
  ctx.plan_ids = {"cand1", "cand2", "cand3"};
  auto p = check_finish(finish_input(), ctx);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_NE(p[0].find("candidate plan item cand3"), std::string::npos) << p[0];
  json in = finish_input();
  in["abandoned"] = {{{"candidate", "cand3"}, {"reason", "stop rule"}}};
  EXPECT_TRUE(check_finish(in, ctx).empty());
}

TEST(Finish, EachDefectIsNamed) {
  FinishContext ctx;
  ctx.plan_ids = {"cand1"};
  ctx.compliance_required = true;
  ctx.commit_exists = [](const std::string&) { return false; };
  json in = finish_input();
  in["ledger"] = std::string(kGoodLedger).substr(std::string(kGoodLedger).find('\n') + 1);
  in["final_candidate"]["sha"] = "feedbeef";
  in["final_candidate"]["path"] = "../../ref.py";
  in["mechanism"] = "the claim is refuted";
  std::string msg = finish_rejection(check_finish(in, ctx));
  for (const char* want :
       {"loaded: [...]", "cand2 is not a candidate plan item",
        "does not exist on the experiment branch", "not the committed SHA of any ledger row",
        "without \"..\"", "verdict language (refuted)", "compliance:"}) {
    EXPECT_NE(msg.find(want), std::string::npos) << want << "\n" << msg;
  }
}

TEST(Roles, AuthorPromptIsTheBriefPlusTheContractAndVerifierGetsItsBriefOnly) {
  std::string a = author_system_prompt("# Brief\nreference: ref.py", {"cand1", "cand2"});
  EXPECT_EQ(a.rfind("# Brief\nreference: ref.py\n", 0), 0u);
  EXPECT_NE(a.find("| candidate | class | committed SHA | parity (max abs / max rel) |"),
            std::string::npos)
      << a;
  EXPECT_NE(a.find("loaded: ["), std::string::npos);
  EXPECT_NE(a.find("cand1, cand2"), std::string::npos);
  EXPECT_EQ(verifier_system_prompt("# Verifier brief\n"), "# Verifier brief\n");
}

TEST(FakeScript, ValidationNamesTheTurnAndField) {
  auto expect_error = [](const std::string& text, const std::string& want) {
    try {
      FakeScript::parse(text, "s.json");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
    }
  };
  expect_error("[]", "s.json: not a JSON object");
  expect_error(R"({"turns":[]})", "non-empty array");
  expect_error(R"({"turns":[{"text":"a","faults":[{"kind":"explode"}]}]})",
               "turns[0].faults[0]: kind \"explode\"");
  expect_error(R"({"turns":[{"text":"a"},{"tool_calls":[{"input":{}}]}]})",
               "turns[1].tool_calls[0]: a tool call needs a string \"name\"");
  expect_error(R"({"turns":[{"txt":"a"}]})", "unknown field \"txt\"");
  expect_error(R"({"turns":[{"text":"a","faults":[{"kind":"status","status":200}]}]})",
               "between 400 and 599");
}

TEST(FakeLlmCli, BadScriptIsRefusedNamingTheProblem) {
  kd::test::TempDir tmp;
  std::string script = tmp / "s.json";
  FILE* f = std::fopen(script.c_str(), "w");
  std::fputs(R"({"turns":[{"stop_reason":"x"}]})", f);
  std::fclose(f);
  auto r = kd::test::run_kdispatch({"fake-llm", "--script", script});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("turns[0]: a turn needs text or tool_calls"), std::string::npos) << r.err;
  auto u = kd::test::run_kdispatch({"fake-llm"});
  EXPECT_EQ(u.exit_code, 64);
  f = std::fopen(script.c_str(), "w");
  std::fputs(R"({"turns":[{"text":"x"}]})", f);
  std::fclose(f);
  auto l = kd::test::run_kdispatch({"fake-llm", "--script", script, "--listen", "0.0.0.0:0"});
  EXPECT_NE(l.exit_code, 0);
  EXPECT_NE(l.err.find("only a loopback address"), std::string::npos) << l.err;
  auto port =
      kd::test::run_kdispatch({"fake-llm", "--script", script, "--listen", "127.0.0.1:http"});
  EXPECT_NE(port.exit_code, 0);
  EXPECT_NE(port.err.find("the port must be a number"), std::string::npos) << port.err;
}

}  // namespace
}  // namespace kd::agents
