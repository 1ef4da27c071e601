// The fake server's connections over real loopback sockets: a request must arrive whole within
// the read deadline, a connection that fails is reported on stderr, a client that leaves is not.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>

#include "agents/fake/server.h"
#include "common/fd.h"
#include "common/files.h"
#include "tests/support/process.h"

namespace kd::agents {
namespace {

using namespace std::chrono_literals;

// Points this process's stderr (where the server's threads report) at a file until text().
class StderrCapture {
 public:
  explicit StderrCapture(std::string path) : path_(std::move(path)), saved_(::dup(2)) {
    UniqueFd f(::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    EXPECT_TRUE(f && saved_) << "cannot redirect stderr to " << path_;
    ::dup2(f.get(), 2);
  }
  ~StderrCapture() { restore(); }
  std::string text() {
    restore();
    return read_file(path_);
  }

 private:
  void restore() {
    if (!saved_) return;
    ::dup2(saved_.get(), 2);
    saved_.reset();
  }
  std::string path_;
  UniqueFd saved_;
};

UniqueFd connect_to(unsigned short port) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 0)
      << "connect 127.0.0.1:" << port << ": errno " << errno;
  timeval limit{20, 0};  // a server that never closes fails the test instead of hanging it
  ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  return fd;
}

void send_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    ASSERT_GT(n, 0) << "send: errno " << errno;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

// Everything the server sends until it closes the connection.
std::string read_to_close(int fd) {
  std::string got;
  char buf[4096];
  for (;;) {
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n == 0) return got;
    if (n < 0) {
      ADD_FAILURE() << "recv: errno " << errno << " (the server kept the connection open)";
      return got;
    }
    got.append(buf, static_cast<size_t>(n));
  }
}

// A request answered at once (no wire serves the path). Once its answer is read, the server's
// one thread has finished with every connection that failed before it, report included.
std::string answered_request(unsigned short port) {
  UniqueFd c = connect_to(port);
  send_all(c.get(), "GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n");
  return read_to_close(c.get());
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

const char* kScript = R"({"turns":[{"text":"hi"}]})";

TEST(FakeServerConnections, AClientThatStopsSendingIsDroppedAtTheReadDeadlineAndReported) {
  kd::test::TempDir tmp;
  FakeServer server(FakeScript::parse(kScript, "s"), "127.0.0.1:0", 1, 300ms);
  StderrCapture err(tmp / "stderr");
  UniqueFd c = connect_to(server.port());
  send_all(c.get(), "POST /v1/messages HTTP/1.1\r\nHost: x\r\n");
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(read_to_close(c.get()), "");
  auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, 250ms);
  EXPECT_LT(waited, 10s);
  EXPECT_NE(answered_request(server.port()).find("HTTP/1.1 404 Not Found"), std::string::npos);
  std::string text = err.text();
  EXPECT_EQ(count(text, "fake-llm: connection from 127.0.0.1:"), 1u) << text;
  EXPECT_NE(text.find("timeout"), std::string::npos) << text;
  ASSERT_EQ(server.requests().size(), 1u);  // the unfinished request was never taken
  EXPECT_EQ(server.requests()[0].wire, "unknown");
}

TEST(FakeServerConnections, GarbageIsReportedAndAClientLeavingIsNot) {
  kd::test::TempDir tmp;
  FakeServer server(FakeScript::parse(kScript, "s"));
  StderrCapture err(tmp / "stderr");
  connect_to(server.port());  // connects and leaves without a request
  UniqueFd bad = connect_to(server.port());
  send_all(bad.get(), "NOT HTTP\r\n\r\n");
  EXPECT_EQ(read_to_close(bad.get()), "");
  EXPECT_NE(answered_request(server.port()).find("no route /nowhere"), std::string::npos);
  std::string text = err.text();
  EXPECT_EQ(count(text, "fake-llm: connection from 127.0.0.1:"), 1u) << text;
  EXPECT_EQ(count(text, "\n"), 1u) << text;
}

}  // namespace
}  // namespace kd::agents
