// Approvals over a real pseudo-terminal, the way a person supervises a dispatch.
#include "dispatcher/supervisor.h"

#include <gtest/gtest.h>
#include <pty.h>
#include <termios.h>
#include <unistd.h>

#include <poll.h>

#include <chrono>
#include <string>
#include <thread>

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
  // asynchronously) or two seconds pass.
  std::string read_until(const std::string& needle) {
    std::string out;
    char buf[4096];
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (out.find(needle) == std::string::npos && std::chrono::steady_clock::now() < deadline) {
      pollfd p{master, POLLIN, 0};
      if (poll(&p, 1, 50) <= 0) continue;
      ssize_t n = read(master, buf, sizeof buf);
      if (n <= 0) break;
      out.append(buf, static_cast<size_t>(n));
    }
    return out;
  }
};

TEST(Supervisor, ApprovesOnlyAnExplicitYesOverAPty) {
  Pty pty;
  Supervisor sup(pty.slave, pty.slave);
  ASSERT_EQ(write(pty.master, "y\n", 2), 2);
  EXPECT_TRUE(sup.approve("run", "make test"));
  EXPECT_NE(pty.read_until("[y/N]").find("approve run: make test? [y/N]"), std::string::npos);
  ASSERT_EQ(write(pty.master, "\n", 1), 1);
  EXPECT_FALSE(sup.approve("commit", "cand1(x v001): a — b"));
  ASSERT_EQ(write(pty.master, "nope\n", 5), 5);
  EXPECT_FALSE(sup.approve("run_on_chip", "python3 bench.py"));
  ASSERT_EQ(write(pty.master, "YES \n", 5), 5);
  EXPECT_TRUE(sup.approve("run", "ls"));
  sup.show("model says hi");
  EXPECT_NE(pty.read_until("model says hi").find("model says hi"), std::string::npos);
}

TEST(Supervisor, ClosedInputDenies) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  close(fds[1]);
  int out[2];
  ASSERT_EQ(pipe(out), 0);
  Supervisor sup(fds[0], out[1]);
  EXPECT_FALSE(sup.approve("run", "rm -rf build"));
  close(fds[0]);
  close(out[0]);
  close(out[1]);
}

}  // namespace
}  // namespace kd::dispatcher
