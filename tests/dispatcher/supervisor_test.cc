// Approvals over a real pseudo-terminal, the way a person supervises a dispatch.
#include "dispatcher/supervisor.h"

#include <gtest/gtest.h>
#include <pty.h>
#include <unistd.h>

#include <string>
#include <thread>

namespace kd::dispatcher {
namespace {

struct Pty {
  int master = -1, slave = -1;
  Pty() { EXPECT_EQ(openpty(&master, &slave, nullptr, nullptr, nullptr), 0); }
  ~Pty() {
    close(master);
    close(slave);
  }
  std::string drain() {
    std::string out;
    char buf[4096];
    fd_set set;
    timeval tv{0, 100000};
    for (;;) {
      FD_ZERO(&set);
      FD_SET(master, &set);
      if (select(master + 1, &set, nullptr, nullptr, &tv) <= 0) return out;
      ssize_t n = read(master, buf, sizeof buf);
      if (n <= 0) return out;
      out.append(buf, static_cast<size_t>(n));
    }
  }
};

TEST(Supervisor, ApprovesOnlyAnExplicitYesOverAPty) {
  Pty pty;
  Supervisor sup(pty.slave, pty.slave);
  ASSERT_EQ(write(pty.master, "y\n", 2), 2);
  EXPECT_TRUE(sup.approve("run", "make test"));
  EXPECT_NE(pty.drain().find("approve run: make test? [y/N]"), std::string::npos);
  ASSERT_EQ(write(pty.master, "\n", 1), 1);
  EXPECT_FALSE(sup.approve("commit", "cand1(x v001): a — b"));
  ASSERT_EQ(write(pty.master, "nope\n", 5), 5);
  EXPECT_FALSE(sup.approve("run_on_chip", "python3 bench.py"));
  ASSERT_EQ(write(pty.master, "YES \n", 5), 5);
  EXPECT_TRUE(sup.approve("run", "ls"));
  sup.show("model says hi");
  EXPECT_NE(pty.drain().find("model says hi"), std::string::npos);
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
