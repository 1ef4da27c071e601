// Approvals over a real pseudo-terminal, the way a person supervises a dispatch.
#include "dispatcher/supervisor.h"

#include <gtest/gtest.h>
#include <pty.h>
#include <termios.h>
#include <unistd.h>

#include <poll.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace kd::dispatcher {
namespace {

struct Pty {
  int master = -1, slave = -1;
  Pty() {
    EXPECT_EQ(openpty(&master, &slave, nullptr, nullptr, nullptr), 0);
    // No echo: the line discipline echoes typed input asynchronously, which could land in the
    // middle of the prompt the test reads back.
    termios t{};
    tcgetattr(slave, &t);
    t.c_lflag &= ~tcflag_t(ECHO);
    tcsetattr(slave, TCSANOW, &t);
  }
  ~Pty() {
    close(master);
    close(slave);
  }
  // Reads what the terminal shows until `needle` appears (the pty delivers output
  // asynchronously) or ten seconds pass.
  std::string read_until(const std::string& needle) {
    std::string out;
    char buf[4096];
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (out.find(needle) == std::string::npos && std::chrono::steady_clock::now() < deadline) {
      pollfd p{master, POLLIN, 0};
      if (poll(&p, 1, 50) <= 0) continue;
      ssize_t n = read(master, buf, sizeof buf);
      if (n <= 0) break;
      // The line discipline writes newlines as \r\n.
      for (ssize_t i = 0; i < n; ++i)
        if (buf[i] != '\r') out += buf[i];
    }
    return out;
  }
};

ApprovalRequest run_request(std::string id, std::vector<std::string> argv) {
  return {"run", std::move(id), std::move(argv), ""};
}

TEST(Supervisor, EachAnswerOverAPtyIsADecisionWithItsRecords) {
  Pty pty;
  TerminalSupervisor sup(pty.slave, pty.slave);
  ASSERT_EQ(write(pty.master, "y\n", 2), 2);
  Decision approved = sup.decide(run_request("c1", {"make", "test"}));
  EXPECT_TRUE(approved.approved);
  EXPECT_NE(pty.read_until("> ").find("approve run (call c1):\n    make test\n"),
            std::string::npos);
  ASSERT_EQ(approved.records.size(), 1u);
  EXPECT_EQ(approved.records[0]["decision"], "approved");
  EXPECT_EQ(approved.records[0]["command"], nlohmann::json::array({"make", "test"}));

  // An empty answer approves nothing: the choices are shown again. A denial asks for its reason.
  const std::string answers = "\nd\nnot before the screen run\n";
  ASSERT_EQ(write(pty.master, answers.data(), answers.size()), ssize_t(answers.size()));
  Decision denied = sup.decide({"commit", "c2", {}, "cand1(x v001): a — b"});
  EXPECT_FALSE(denied.approved);
  EXPECT_FALSE(denied.stop);
  EXPECT_EQ(denied.reason, "not before the screen run");
  EXPECT_EQ(denied.records.back()["reason"], "not before the screen run");
  EXPECT_EQ(denied.records.back()["message"], "cand1(x v001): a — b");

  // Notes come before the answer; a prefix then approves what starts with it, for its tool only.
  const std::string more = "m look at the ledger\np 2\n";
  ASSERT_EQ(write(pty.master, more.data(), more.size()), ssize_t(more.size()));
  Decision prefix = sup.decide(run_request("c3", {"python3", "bench.py", "--size", "8"}));
  EXPECT_TRUE(prefix.approved);
  EXPECT_EQ(prefix.notes, std::vector<std::string>{"look at the ledger"});
  EXPECT_NE(
      Supervisor::for_model(prefix).find("[note from the supervising person] look at the ledger"),
      std::string::npos);
  ASSERT_EQ(prefix.records.size(), 2u);
  EXPECT_EQ(prefix.records[0]["decision"], "note");
  EXPECT_EQ(prefix.records[1]["decision"], "prefix_approved");
  EXPECT_EQ(prefix.records[1]["prefix"], nlohmann::json::array({"python3", "bench.py"}));
  pty.read_until("rest of the session");
  Decision by_prefix = sup.decide(run_request("c4", {"python3", "bench.py", "--size", "16"}));
  EXPECT_TRUE(by_prefix.approved);
  EXPECT_EQ(by_prefix.records[0]["decision"], "approved_by_prefix");
  EXPECT_NE(pty.read_until("--size 16").find("approved by the session's prefix `python3 bench.py`"),
            std::string::npos);

  // Not the same prefix (another tool, a shorter command): asked. Stop ends the session.
  ASSERT_EQ(write(pty.master, "s\n", 2), 2);
  Decision stop = sup.decide({"run_on_chip", "c5", {"python3", "bench.py"}, ""});
  EXPECT_FALSE(stop.approved);
  EXPECT_TRUE(stop.stop);
  EXPECT_EQ(stop.records.back()["decision"], "stopped");
  EXPECT_EQ(stop.records.back()["by"], "terminal");

  sup.show("model says hi");
  EXPECT_NE(pty.read_until("model says hi").find("model says hi"), std::string::npos);
}

TEST(Supervisor, ClosedInputDenies) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  close(fds[1]);
  int out[2];
  ASSERT_EQ(pipe(out), 0);
  TerminalSupervisor sup(fds[0], out[1]);
  Decision d = sup.decide(run_request("c1", {"rm", "-rf", "build"}));
  EXPECT_FALSE(d.approved);
  EXPECT_NE(d.reason.find("end of input"), std::string::npos);
  EXPECT_FALSE(sup.decide(run_request("c2", {"ls"})).approved);
  close(fds[0]);
  close(out[0]);
  close(out[1]);
}

TEST(Supervisor, CommandsAreShownAsShellWordsFoldedToTheWidth) {
  ApprovalRequest r = run_request(
      "c1", {"python3", "-c", "import x\nprint(x.y)", "--name", "it's", std::string(50, 'a')});
  EXPECT_EQ(render_request(r, 40),
            "    python3 -c\n"
            "      'import x\n"
            "      print(x.y)' --name 'it'\\''s'\n"
            "      " +
                std::string(34, 'a') + "\n      " + std::string(16, 'a') + "\n");
  EXPECT_EQ(shell_word("a b"), "'a b'");
  EXPECT_EQ(shell_word(""), "''");
  EXPECT_EQ(shell_word("--x=1"), "--x=1");
  // An escape the model wrote is shown, never sent to the terminal (it could hide the command).
  EXPECT_EQ(shell_word("ls\x1b[8m; rm -rf x"), "'ls\\x1b[8m; rm -rf x'");
  EXPECT_EQ(render_request({"commit", "c2", {}, "cand1(x v001): a — b\n\nbody"}, 80),
            "    cand1(x v001): a — b\n    \n    body\n");
}

}  // namespace
}  // namespace kd::dispatcher
