// A supervised dispatch through `kdispatch mcp`: the demo's honest author on a fake model served
// from this process (so the requests it received show what the model was told after each
// decision), answered with pending and decide the way a master session answers: a prefix, an
// approval with a note, a denial with its reason, a stop; and the decides that must fail (an
// unknown call, malformed answers, a second answer, an answer to a cancelled run).
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "agents/fake/server.h"
#include "common/files.h"
#include "tests/mcp/mcp_driver.h"
#include "tests/support/example_env.h"

namespace kd {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using test::McpDriver;
using namespace std::chrono_literals;

// The honest author with one more python3 run after its first, which the prefix approval of
// the first covers: turn N is asked by the N-th request.
//   1 w1 + p1 (run)   2 p2 (run)   3 m1 (run_on_chip)   4 c1 (commit)   5 e2
//   6 m2 (run_on_chip)   7 c2 (commit)   8 finish
json supervised_script() {
  json s = json::parse(read_file(test::ExampleEnv::script("honest-author.json")));
  json again = {{"id", "p2"},
                {"name", "run"},
                {"input", {{"command", {"python3", "-c", "print('prefix-approved')"}}}}};
  s["turns"].insert(s["turns"].begin() + 2,
                    json{{"text", "Once more."}, {"tool_calls", json::array({again})}});
  return s;
}

bool live(const json& status) {
  const std::string s = status.value("state", "");
  return s == "authoring" || s == "verifying" || s == "awaiting_approval";
}

std::vector<json> records_of(const fs::path& transcript, const std::string& type) {
  std::vector<json> out;
  std::istringstream in(read_file(transcript));
  for (std::string line; std::getline(in, line);) {
    json r = json::parse(line);
    if (r["type"] == type) out.push_back(r["data"]);
  }
  return out;
}

TEST(McpSupervise, PendingAndDecideApprovePrefixNoteDenyAndStop) {
  test::ExampleEnv env;
  agents::FakeServer model(agents::FakeScript::parse(supervised_script().dump(), "script"));
  const std::string secret = "sk-ant-test-supervised-0123456789";
  const std::string keys = (fs::path(env.root) / "keys").string();
  write_file_atomic(keys, "ANTHROPIC_API_KEY=" + secret + "\n");
  fs::permissions(keys, fs::perms::owner_read | fs::perms::owner_write);
  const fs::path root = fs::path(env.root) / "mcp-runs";
  McpDriver mcp({"--keys", keys, "--run-root", root.string(), "--wiki", env.wiki.string()});
  mcp.initialize();
  std::string results;  // every result, to look for the key
  auto call = [&](const std::string& tool, json args) {
    json r = mcp.call(tool, std::move(args));
    results += r.dump() + "\n";
    return r;
  };

  const json dispatch = {{"family", "rms-norm"},         {"experiment", "v002"},
                         {"chips", env.chips.string()},  {"tool_dirs", {env.tools.string()}},
                         {"provider", "anthropic"},      {"model", "fake-author"},
                         {"base_url", model.base_url()}, {"supervise", true}};
  json d = call("dispatch", dispatch);
  ASSERT_FALSE(d.value("isError", false)) << d.dump();
  const std::string id = d["structuredContent"]["run_id"];
  EXPECT_EQ(d["structuredContent"]["supervised"], true);
  auto err = [&] {
    return read_file(root / id / "stdout.log") + read_file(root / id / "stderr.log");
  };

  // Waits (with `wait`, which returns once a request is posted) until `call_id` is pending.
  auto request = [&](const std::string& call_id) {
    for (int i = 0; i < 20; ++i) {
      json p = call("pending", {{"run_id", id}});
      for (const auto& r : p["structuredContent"]["pending"])
        if (r["call_id"] == call_id) return r;
      json w = call("wait", {{"run_id", id}, {"timeout_s", 45}});
      if (!live(w["structuredContent"])) break;
    }
    ADD_FAILURE() << call_id << " never became pending\n" << err();
    return json();
  };
  auto decide = [&](json args) {
    args["run_id"] = id;
    return call("decide", std::move(args));
  };
  auto body = [&](size_t i) { return model.requests().at(i).body; };

  // p1: the status says the author waits; the request shows the script line by line.
  json p1 = request("p1");
  ASSERT_FALSE(p1.is_null());
  EXPECT_EQ(p1["tool"], "run");
  EXPECT_EQ(p1["turn"], 2);
  EXPECT_EQ(p1["command"][0], "python3");
  EXPECT_NE(p1["shown"].get<std::string>().find("    python3 -c\n      'import numpy as np\n"),
            std::string::npos)
      << p1.dump();
  json st = call("status", {{"run_id", id}})["structuredContent"];
  EXPECT_EQ(st["state"], "awaiting_approval") << st.dump();
  EXPECT_EQ(st["pending"], 1);

  // The decides that fail: an unknown call, malformed answers. Each names the problem.
  json unknown = decide({{"call_id", "zz9"}, {"decision", "approve"}});
  EXPECT_TRUE(unknown.value("isError", false));
  EXPECT_NE(unknown.dump().find("no request \\\"zz9\\\" is pending in run"), std::string::npos)
      << unknown.dump();
  EXPECT_NE(unknown.dump().find("p1"), std::string::npos) << unknown.dump();
  json no_reason = decide({{"call_id", "p1"}, {"decision", "deny"}});
  EXPECT_TRUE(no_reason.value("isError", false));
  EXPECT_NE(no_reason.dump().find("reason"), std::string::npos) << no_reason.dump();
  json too_long = decide({{"call_id", "p1"}, {"decision", "approve_prefix"}, {"prefix_words", 9}});
  EXPECT_TRUE(too_long.value("isError", false));
  EXPECT_NE(too_long.dump().find("prefix_words"), std::string::npos) << too_long.dump();
  json bad_enum = decide({{"call_id", "p1"}, {"decision", "maybe"}});
  EXPECT_TRUE(bad_enum.value("isError", false));
  EXPECT_NE(bad_enum.dump().find("decision"), std::string::npos) << bad_enum.dump();
  EXPECT_EQ(call("status", {{"run_id", id}})["structuredContent"]["pending"], 1);

  // Approve `python3 -c` for the session; a second answer to p1 is refused.
  json ok = decide({{"call_id", "p1"}, {"decision", "approve_prefix"}, {"prefix_words", 2}});
  ASSERT_FALSE(ok.value("isError", false)) << ok.dump();
  EXPECT_EQ(ok["structuredContent"]["posted"], true);
  json twice = decide({{"call_id", "p1"}, {"decision", "approve"}});
  EXPECT_TRUE(twice.value("isError", false)) << twice.dump();
  EXPECT_NE(twice.dump().find("already decided"), std::string::npos) << twice.dump();

  // p2 is approved by the prefix: the next request is m1. Approve it with a note.
  json m1 = request("m1");
  ASSERT_FALSE(m1.is_null());
  EXPECT_EQ(m1["tool"], "run_on_chip");
  ASSERT_FALSE(decide({{"call_id", "m1"},
                       {"decision", "approve"},
                       {"notes", {"look at the ledger before the second candidate"}}})
                   .value("isError", false));
  // The note reached the model with m1's result.
  json c1 = request("c1");
  ASSERT_FALSE(c1.is_null());
  EXPECT_NE(c1["message"].get<std::string>().find("cand1"), std::string::npos) << c1.dump();
  ASSERT_GE(model.requests().size(), 5u);
  EXPECT_NE(body(4).find("[note from the supervising person] look at the ledger before the second "
                         "candidate"),
            std::string::npos)
      << body(4);
  ASSERT_FALSE(decide({{"call_id", "c1"}, {"decision", "approve"}}).value("isError", false));

  // Deny m2 with a reason: the model reads it in its next request, and nothing was measured.
  ASSERT_FALSE(request("m2").is_null());
  ASSERT_FALSE(
      decide({{"call_id", "m2"}, {"decision", "deny"}, {"reason", "rebuild before measuring"}})
          .value("isError", false));
  ASSERT_FALSE(request("c2").is_null());
  ASSERT_GE(model.requests().size(), 8u);
  EXPECT_NE(body(7).find("the supervising person denied this run_on_chip call: rebuild before "
                         "measuring"),
            std::string::npos)
      << body(7);

  // Stop at c2: the session ends, no verifier runs, and the run's state says why.
  ASSERT_FALSE(decide({{"call_id", "c2"}, {"decision", "stop"}}).value("isError", false));
  json s;
  for (int i = 0; i < 20; ++i) {
    s = call("wait", {{"run_id", id}, {"timeout_s", 45}})["structuredContent"];
    if (!live(s)) break;
  }
  EXPECT_EQ(s["state"], "stopped") << s.dump() << "\n" << err();
  EXPECT_EQ(s["exit_code"], 2) << s.dump();
  EXPECT_EQ(s["pending"], 0);
  EXPECT_EQ(model.requests().size(), 8u) << "the model was asked after the stop";
  json late = decide({{"call_id", "c2"}, {"decision", "approve"}});
  EXPECT_TRUE(late.value("isError", false));
  EXPECT_NE(late.dump().find("already decided (stop)"), std::string::npos) << late.dump();
  EXPECT_NE(read_file(root / id / "stdout.log").find("the supervising person stopped the author"),
            std::string::npos)
      << read_file(root / id / "stdout.log");

  // Every decision is in the transcript, by the file channel; the audit lists them apart.
  const fs::path run = root / id / "runs/example/rms-norm-v002";
  std::vector<std::string> seen;
  for (const auto& r : records_of(run / "author/transcript.jsonl", "decision")) {
    seen.push_back(r["decision"].get<std::string>() + " " + r["tool_call_id"].get<std::string>());
    EXPECT_EQ(r["by"], "file") << r.dump();
  }
  EXPECT_EQ(seen,
            (std::vector<std::string>{"prefix_approved p1", "approved_by_prefix p2", "note m1",
                                      "approved m1", "approved c1", "denied m2", "stopped c2"}));
  json audit = call("audit", {{"run_id", id}});
  ASSERT_FALSE(audit.value("isError", false)) << audit.dump();
  std::vector<std::string> listed;
  for (const auto& e : audit["structuredContent"]["report"]["supervision"])
    listed.push_back(e["decision"]);
  EXPECT_EQ(listed, (std::vector<std::string>{"prefix_approved", "approved_by_prefix", "note",
                                              "denied", "stopped"}))
      << audit.dump();
  EXPECT_NE(audit.dump().find("rebuild before measuring"), std::string::npos);

  // A run cancelled while its author waits: its request is left, and nothing answers it.
  json again = call("dispatch", dispatch);
  ASSERT_FALSE(again.value("isError", false)) << again.dump();
  const std::string id2 = again["structuredContent"]["run_id"];
  for (int i = 0; i < 20; ++i) {
    json w = call("wait", {{"run_id", id2}, {"timeout_s", 45}})["structuredContent"];
    if (w["state"] == "awaiting_approval" || !live(w)) break;
  }
  json c = call("cancel", {{"run_id", id2}});
  EXPECT_EQ(c["structuredContent"]["state"], "cancelled") << c.dump();
  json dead = call("decide", {{"run_id", id2}, {"call_id", "p1"}, {"decision", "approve"}});
  EXPECT_TRUE(dead.value("isError", false)) << dead.dump();
  EXPECT_NE(dead.dump().find("is cancelled: nothing waits for a decision any more"),
            std::string::npos)
      << dead.dump();

  EXPECT_EQ(results.find(secret), std::string::npos) << "a result carried the key";
  EXPECT_EQ(mcp.finish(), 0);
  EXPECT_TRUE(mcp.non_protocol_lines().empty());
}

}  // namespace
}  // namespace kd
