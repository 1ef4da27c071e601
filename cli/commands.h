// One function per subcommand; each lives in cmd_<name>.cc. Arguments exclude the subcommand.
#pragma once

#include <string>
#include <vector>

namespace kd::cli {

using Args = std::vector<std::string>;

int cmd_brief(const Args& args);
int cmd_sandbox(const Args& args);
int cmd_author(const Args& args);
int cmd_verify(const Args& args);
int cmd_run(const Args& args);
int cmd_status(const Args& args);
int cmd_receipt(const Args& args);
int cmd_transcript(const Args& args);
int cmd_report(const Args& args);
int cmd_audit(const Args& args);
int cmd_fake_llm(const Args& args);
int cmd_demo(const Args& args);
int cmd_mcp(const Args& args);
int cmd_chip_job(const Args& args);

}  // namespace kd::cli
