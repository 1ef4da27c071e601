// `kdispatch mcp` as a real child process, driven line by line: the handshakes of both protocol
// eras, the tool list and its schemas, and every malformed or misplaced request.
#include <gtest/gtest.h>

#include <set>

#include "tests/mcp/mcp_driver.h"
#include "tests/support/process.h"

namespace kd {
namespace {

using json = nlohmann::json;
using test::McpDriver;

const json kModernMeta = {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
                          {"io.modelcontextprotocol/clientCapabilities", json::object()}};

TEST(McpProtocol, InitializeAndListTools) {
  test::TempDir dir;
  McpDriver mcp({"--run-root", dir / "runs"});
  json init = mcp.initialize();
  ASSERT_TRUE(init.contains("result")) << init.dump();
  EXPECT_EQ(init["result"]["protocolVersion"], "2025-06-18");  // a supported version is echoed
  EXPECT_EQ(init["result"]["serverInfo"]["name"], "kdispatch");
  EXPECT_TRUE(init["result"]["capabilities"].contains("tools"));

  json list = mcp.request("tools/list");
  ASSERT_TRUE(list.contains("result")) << list.dump();
  std::vector<std::string> names;
  for (const auto& t : list["result"]["tools"]) {
    names.push_back(t["name"]);
    EXPECT_EQ(t["inputSchema"]["type"], "object") << t.dump();
    EXPECT_EQ(t["outputSchema"]["type"], "object") << t.dump();
    EXPECT_FALSE(t.value("description", "").empty()) << t.dump();
  }
  EXPECT_EQ(names,
            (std::vector<std::string>{"brief", "dispatch", "status", "wait", "pending", "decide",
                                      "outcome", "audit", "transcript", "cancel"}));
  EXPECT_EQ(mcp.request("ping")["result"], json::object());
  EXPECT_EQ(mcp.finish(), 0);
  EXPECT_TRUE(mcp.non_protocol_lines().empty());
}

TEST(McpProtocol, UnsupportedLegacyVersionGetsTheLatest) {
  test::TempDir dir;
  McpDriver mcp({"--run-root", dir / "runs"});
  json r = mcp.request("initialize", {{"protocolVersion", "1999-01-01"},
                                      {"capabilities", json::object()},
                                      {"clientInfo", {{"name", "x"}, {"version", "1"}}}});
  EXPECT_EQ(r["result"]["protocolVersion"], "2025-11-25") << r.dump();
}

TEST(McpProtocol, RequestBeforeInitializeIsRefused) {
  test::TempDir dir;
  McpDriver mcp({"--run-root", dir / "runs"});
  json r = mcp.request("tools/list");
  ASSERT_TRUE(r.contains("error")) << r.dump();
  EXPECT_EQ(r["error"]["code"], -32600);
  EXPECT_NE(r["error"]["message"].get<std::string>().find("initialize"), std::string::npos);
  // Then the handshake works and the same request is answered.
  mcp.initialize();
  EXPECT_TRUE(mcp.request("tools/list").contains("result"));
}

TEST(McpProtocol, StatelessRequestsNeedNoHandshake) {
  test::TempDir dir;
  McpDriver mcp({"--run-root", dir / "runs"});
  json d = mcp.request("server/discover", {{"_meta", kModernMeta}});
  ASSERT_TRUE(d.contains("result")) << d.dump();
  EXPECT_EQ(d["result"]["resultType"], "complete");
  EXPECT_EQ(d["result"]["supportedVersions"][0], "2026-07-28");
  json list = mcp.request("tools/list", {{"_meta", kModernMeta}});
  ASSERT_TRUE(list.contains("result")) << list.dump();
  EXPECT_EQ(list["result"]["tools"].size(), 10u);
  json st = mcp.request(
      "tools/call", {{"_meta", kModernMeta}, {"name", "status"}, {"arguments", json::object()}});
  EXPECT_EQ(st["result"]["structuredContent"]["runs"], json::array()) << st.dump();

  json meta = kModernMeta;
  meta["io.modelcontextprotocol/protocolVersion"] = "2030-01-01";
  json bad = mcp.request("tools/list", {{"_meta", meta}});
  ASSERT_TRUE(bad.contains("error")) << bad.dump();
  EXPECT_EQ(bad["error"]["code"], -32022);
  EXPECT_EQ(bad["error"]["data"]["requested"], "2030-01-01");
  EXPECT_EQ(bad["error"]["data"]["supported"][0], "2026-07-28");
}

TEST(McpProtocol, MalformedMessagesAreJsonRpcErrors) {
  test::TempDir dir;
  McpDriver mcp({"--run-root", dir / "runs"});
  mcp.initialize();
  mcp.send_line("this is not json");
  auto e = mcp.next();
  ASSERT_TRUE(e) << "no answer to a line that is not JSON";
  EXPECT_EQ((*e)["error"]["code"], -32700);
  EXPECT_TRUE((*e)["id"].is_null());

  mcp.send_line(R"({"jsonrpc":"2.0","id":7})");
  e = mcp.response(7, std::chrono::seconds(10));
  ASSERT_TRUE(e);
  EXPECT_EQ((*e)["error"]["code"], -32600);

  mcp.send_line(R"([{"jsonrpc":"2.0","id":8,"method":"ping"}])");
  e = mcp.next();
  ASSERT_TRUE(e);
  EXPECT_EQ((*e)["error"]["code"], -32600);

  json unknown = mcp.request("resources/frobnicate");
  EXPECT_EQ(unknown["error"]["code"], -32601) << unknown.dump();
  json no_tool = mcp.request("tools/call", {{"name", "frobnicate"}, {"arguments", json::object()}});
  EXPECT_EQ(no_tool["error"]["code"], -32602) << no_tool.dump();
  EXPECT_NE(no_tool["error"]["message"].get<std::string>().find("frobnicate"), std::string::npos);
  json bad_init = mcp.request("initialize", {{"capabilities", json::object()}});
  EXPECT_EQ(bad_init["error"]["code"], -32602) << bad_init.dump();
}

TEST(McpProtocol, BadArgumentsAreToolErrorsNamingEachProblem) {
  test::TempDir dir;
  McpDriver mcp({"--run-root", dir / "runs"});
  mcp.initialize();
  json r = mcp.call("dispatch", {{"family", 3}, {"provider", "acme"}, {"colour", "red"}});
  EXPECT_EQ(r["isError"], true) << r.dump();
  EXPECT_FALSE(r.contains("structuredContent"));
  std::string text = r["content"][0]["text"];
  for (const char* want : {"\"family\" must be a string", "\"experiment\" is required",
                           "\"provider\" must be one of", "unknown argument \"colour\""})
    EXPECT_NE(text.find(want), std::string::npos) << want << " in " << text;

  json w = mcp.call("wait", {{"run_id", "rms-norm-v002-1"}, {"timeout_s", 600}});
  EXPECT_EQ(w["isError"], true);
  EXPECT_NE(w["content"][0]["text"].get<std::string>().find("at most 45"), std::string::npos)
      << w.dump();
  json s = mcp.call("status", {{"run_id", "../../etc"}});
  EXPECT_EQ(s["isError"], true);
  EXPECT_NE(s["content"][0]["text"].get<std::string>().find("no run"), std::string::npos);
}

TEST(McpProtocol, ExitsAtEndOfInput) {
  test::TempDir dir;
  McpDriver mcp({"--run-root", dir / "runs"});
  mcp.initialize();
  EXPECT_EQ(mcp.finish(), 0);
}

TEST(McpProtocol, KeysFileReadableByOthersIsRefused) {
  test::TempDir dir;
  std::string keys = dir / "keys";
  test::run_process(
      {"sh", "-c", "printf 'ANTHROPIC_API_KEY=sk-test\\n' > " + keys + " && chmod 644 " + keys});
  auto r = test::run_kdispatch({"mcp", "--keys", keys, "--run-root", dir / "runs"});
  EXPECT_EQ(r.exit_code, 70) << r.err;
  EXPECT_NE(r.err.find("chmod 600"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("sk-test"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(McpProtocol, KeysFileWithABadLineIsRefusedNamingTheLine) {
  test::TempDir dir;
  std::string keys = dir / "keys";
  test::run_process({"sh", "-c",
                     "printf '# keys\\nOPENAI_API_KEY=sk-x\\nnot a pair\\n' > " + keys +
                         " && chmod 600 " + keys});
  auto r = test::run_kdispatch({"mcp", "--keys", keys, "--run-root", dir / "runs"});
  EXPECT_EQ(r.exit_code, 70) << r.err;
  EXPECT_NE(r.err.find("line 3"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace kd
