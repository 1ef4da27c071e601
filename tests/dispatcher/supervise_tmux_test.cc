// `kdispatch author --supervise` driven the way a person drives it: in a real terminal (tmux),
// answering each prompt by typing, with the model a fake server in this process so that the
// requests it received show what the model was told after each decision.
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "agents/fake/server.h"
#include "common/exit_codes.h"
#include "common/files.h"
#include "dispatcher/supervisor.h"
#include "tests/support/example_env.h"

namespace kd {
namespace {

using json = nlohmann::json;

// One tmux server of its own (its socket in the test's directory), killed at the end.
class Tmux {
 public:
  explicit Tmux(const std::filesystem::path& dir) : sock_((dir / "tmux.sock").string()) {}
  ~Tmux() { tmux({"kill-server"}); }

  test::ProcessResult tmux(std::vector<std::string> args) const {
    args.insert(args.begin(), {"tmux", "-S", sock_});
    return test::run_process(args, "", {{"TERM", "xterm-256color"}});
  }

  void start(const std::string& command) const {
    auto r = tmux({"new-session", "-d", "-s", "kd", "-x", "160", "-y", "50", command});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    tmux({"set-option", "-t", "kd", "history-limit", "20000"});
  }

  // All the pane has shown, wrapped lines joined.
  std::string screen() const {
    return tmux({"capture-pane", "-p", "-J", "-S", "-", "-t", "kd"}).out;
  }

  // Polls the pane until `needle` shows (generous: a sanitizer build on a busy machine).
  bool wait_for(const std::string& needle, int seconds = 180) const {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (std::chrono::steady_clock::now() < deadline) {
      if (screen().find(needle) != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }

  void type(const std::string& line) const {
    tmux({"send-keys", "-t", "kd", "-l", line});
    tmux({"send-keys", "-t", "kd", "Enter"});
  }

 private:
  std::string sock_;
};

json run_call(const std::string& id, std::vector<std::string> argv) {
  return {{"id", id}, {"name", "run"}, {"input", {{"command", argv}}}};
}

// Turn N runs call tN; the session is stopped at turn 6, so turn 7 is never asked.
json script() {
  json turns = json::array();
  turns.push_back({{"text", "first"}, {"tool_calls", {run_call("t1", {"echo", "first-ran"})}}});
  turns.push_back({{"text", "second"}, {"tool_calls", {run_call("t2", {"echo", "second-ran"})}}});
  turns.push_back({{"text", "third"}, {"tool_calls", {run_call("t3", {"echo", "third-ran"})}}});
  turns.push_back({{"text", "fourth"}, {"tool_calls", {run_call("t4", {"echo", "fourth-ran"})}}});
  turns.push_back({{"text", "fifth"}, {"tool_calls", {run_call("t5", {"ls", "normkit"})}}});
  turns.push_back({{"text", "sixth"}, {"tool_calls", {run_call("t6", {"pwd"})}}});
  turns.push_back({{"text", "never asked"}});
  return {{"model", "fake-author"}, {"turns", turns}};
}

std::vector<json> records_of(const std::filesystem::path& transcript, const std::string& type) {
  std::vector<json> out;
  std::istringstream in(read_file(transcript));
  for (std::string line; std::getline(in, line);) {
    json r = json::parse(line);
    if (r["type"] == type) out.push_back(r["data"]);
  }
  return out;
}

bool tmux_installed() {
  return test::run_process({"sh", "-c", "command -v tmux"}).exit_code == 0;
}

TEST(SuperviseTmux, ApproveDenyPrefixNoteAndStopInARealTerminal) {
  ASSERT_TRUE(tmux_installed())
      << "tmux is not installed: these tests need Debian's tmux package (build.sh installs it "
         "with the test packages)";
  test::ExampleEnv env;
  write_file_atomic(env.root / "script.json", script().dump(2));
  agents::FakeServer server(agents::FakeScript::load(env.root / "script.json"));
  std::string command = dispatcher::shell_word(KD_BINARY);
  for (const std::string& a :
       {std::string("author"),       std::string("--supervise"), std::string("--wiki"),
        env.wiki.string(),           std::string("--family"),    std::string("rms-norm"),
        std::string("--experiment"), std::string("v002"),        std::string("--provider"),
        std::string("anthropic"),    std::string("--base-url"),  server.base_url(),
        std::string("--model"),      std::string("fake-author"), std::string("--chips"),
        env.chips.string(),          std::string("--run-root"),  env.runs.string(),
        std::string("--tool-dir"),   env.tools.string()})
    command += " " + dispatcher::shell_word(a);
  command += " 2>" + dispatcher::shell_word((env.root / "err.txt").string()) +
             "; echo \"kdispatch exited $?\"; exec sleep 3600";
  Tmux tmux(env.root);
  tmux.start("sh -c " + dispatcher::shell_word(command));
  auto err = [&] { return read_file(env.root / "err.txt") + "\n" + tmux.screen(); };
  auto body = [&](size_t request) { return server.requests().at(request).body; };

  // Approve: the command runs, and the model reads its output.
  ASSERT_TRUE(tmux.wait_for("approve run (call t1)")) << err();
  EXPECT_TRUE(tmux.wait_for("echo first-ran")) << tmux.screen();
  tmux.type("a");
  // Deny with a reason: the reason is in the model's next request.
  ASSERT_TRUE(tmux.wait_for("approve run (call t2)")) << err();
  ASSERT_GE(server.requests().size(), 2u);
  EXPECT_NE(body(1).find("first-ran\\n"), std::string::npos) << body(1);
  tmux.type("d stay inside the plan please");
  ASSERT_TRUE(tmux.wait_for("approve run (call t3)")) << err();
  ASSERT_GE(server.requests().size(), 3u);
  EXPECT_NE(body(2).find("denied this run call: stay inside the plan please"), std::string::npos)
      << body(2);
  EXPECT_EQ(body(2).find("second-ran\\n"), std::string::npos) << "a denied command ran";
  // Approve the prefix `echo`: the next echo is approved without a prompt.
  tmux.type("p 1");
  ASSERT_TRUE(tmux.wait_for("run approved by the session's prefix `echo`")) << err();
  // A note goes to the model with the result of the call it was typed at.
  ASSERT_TRUE(tmux.wait_for("approve run (call t5)")) << err();
  EXPECT_EQ(tmux.screen().find("approve run (call t4)"), std::string::npos) << tmux.screen();
  ASSERT_GE(server.requests().size(), 5u);
  EXPECT_NE(body(4).find("fourth-ran\\n"), std::string::npos) << body(4);
  tmux.type("m remember to commit before measuring again");
  ASSERT_TRUE(tmux.wait_for("note kept for the model")) << err();
  tmux.type("a");
  // Stop: the session ends with its own reason and nothing goes on to the verifier.
  ASSERT_TRUE(tmux.wait_for("approve run (call t6)")) << err();
  ASSERT_GE(server.requests().size(), 6u);
  EXPECT_NE(body(5).find("[note from the supervising person] remember to commit before measuring "
                         "again"),
            std::string::npos)
      << body(5);
  tmux.type("s");
  ASSERT_TRUE(tmux.wait_for("kdispatch exited " + std::to_string(kExitRefused))) << err();
  const std::string screen = tmux.screen();
  EXPECT_NE(screen.find("ended: stopped_by_supervisor after 6 turns"), std::string::npos) << screen;
  EXPECT_NE(screen.find("stopped by the supervising person: nothing goes to the verifier"),
            std::string::npos)
      << screen;
  EXPECT_NE(screen.find("----- turn 6 "), std::string::npos) << screen;
  EXPECT_EQ(server.requests().size(), 6u);

  // Every decision is a record of the transcript, whose chain stays intact.
  const auto transcript = env.run_dir() / "author/transcript.jsonl";
  std::vector<std::string> seen;
  for (const auto& d : records_of(transcript, "decision"))
    seen.push_back(d["decision"].get<std::string>() + " " + d["tool_call_id"].get<std::string>());
  EXPECT_EQ(seen, (std::vector<std::string>{"approved t1", "denied t2", "prefix_approved t3",
                                            "approved_by_prefix t4", "note t5", "approved t5",
                                            "stopped t6"}));
  auto decisions = records_of(transcript, "decision");
  ASSERT_EQ(decisions.size(), 7u);
  EXPECT_EQ(decisions[1]["reason"], "stay inside the plan please");
  EXPECT_EQ(decisions[2]["prefix"], json::array({"echo"}));
  EXPECT_EQ(decisions[3]["command"], json::array({"echo", "fourth-ran"}));
  EXPECT_EQ(decisions[4]["text"], "remember to commit before measuring again");
  EXPECT_EQ(decisions[6]["by"], "terminal");
  auto ends = records_of(transcript, "end");
  ASSERT_EQ(ends.size(), 1u);
  EXPECT_EQ(ends[0]["reason"], "stopped_by_supervisor");
  auto verified = test::run_kdispatch({"transcript", "verify", transcript.string()});
  EXPECT_EQ(verified.exit_code, 0) << verified.out << verified.err;
  EXPECT_EQ(json::parse(read_file(env.run_dir() / "run.json"))["end_reason"],
            "stopped_by_supervisor");
  ASSERT_EQ(env.records("finished").size(), 1u);
  EXPECT_EQ(env.records("finished")[0]["data"]["end_reason"], "stopped_by_supervisor");

  // The audit tells the person's denial from a refusal of the sandbox.
  auto audit = test::run_kdispatch({"audit", env.run_dir().string()});
  EXPECT_NE(audit.out.find("SUPERVISOR denied run `'echo' 'second-ran'` (call t2): stay inside the "
                           "plan please"),
            std::string::npos)
      << audit.out;
  EXPECT_EQ(audit.out.find("sandbox_violation"), std::string::npos) << audit.out;
  auto shown = test::run_kdispatch({"transcript", "show", transcript.string()});
  EXPECT_NE(shown.out.find("supervisor denied run `echo second-ran`: stay inside the plan please"),
            std::string::npos)
      << shown.out;

  // A stopped session has nothing for the verifier.
  auto verify = env.verify();
  EXPECT_NE(verify.exit_code, 0);
  EXPECT_NE(verify.err.find("stopped the author session (stopped_by_supervisor): nothing to "
                            "verify"),
            std::string::npos)
      << verify.out << verify.err;
}

}  // namespace
}  // namespace kd
