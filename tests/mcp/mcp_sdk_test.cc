// The official MCP TypeScript SDK drives `kdispatch mcp` through a whole dispatch of the demo's
// honest author, then a supervised one approved once and stopped (sdk_client.mjs). Needs node
// and the SDK installed into the build tree (build.sh); without them the test fails naming what
// is missing.
#include <gtest/gtest.h>

#include "tests/support/example_env.h"

namespace kd {
namespace {

TEST(McpSdk, OfficialClientDispatchesThroughOutcomeAndAudit) {
  test::ExampleEnv env;
  auto r = test::run_process({"node", std::string(KD_SOURCE_DIR) + "/tests/mcp/sdk_client.mjs",
                              KD_MCP_SDK_DIR, KD_BINARY, env.wiki.string(), env.chips.string(),
                              env.tools.string(), test::ExampleEnv::script("honest-author.json"),
                              (env.root / "mcp-runs").string()});
  ASSERT_EQ(r.exit_code, 0) << "node (Debian package nodejs) and @modelcontextprotocol/sdk "
                               "(./build.sh test installs it) are needed:\n"
                            << r.out << r.err;
  EXPECT_NE(r.out.find("sdk client: ok"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace kd
