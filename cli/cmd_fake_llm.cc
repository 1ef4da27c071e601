#include <signal.h>
#include <sys/resource.h>

#include <cstdio>

#include "agents/fake/server.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "common/errors.h"
#include "common/exit_codes.h"

namespace kd::cli {

// kdispatch fake-llm --script FILE [--listen 127.0.0.1:0]: serves the script until SIGINT or
// SIGTERM. The first stdout line is "listening http://127.0.0.1:PORT" so callers learn the port.
int cmd_fake_llm(const Args& args) {
  ParsedArgs p = parse_args(args, {{"script"}, {"listen"}});
  if (!p.positional.empty()) throw UsageError("unexpected argument " + quote(p.positional[0]));
  agents::FakeScript script = agents::FakeScript::load(p.required("script"));

  // Block the signals before the server threads start, so only sigwait below receives them.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);

  // Many concurrent test clients need many sockets; take the hard limit.
  rlimit nofile{};
  if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
    nofile.rlim_cur = nofile.rlim_max;
    setrlimit(RLIMIT_NOFILE, &nofile);
  }
  agents::FakeServer server(std::move(script), p.get("listen", "127.0.0.1:0"));
  std::printf("listening %s\n", server.base_url().c_str());
  std::fflush(stdout);
  int sig = 0;
  sigwait(&stop, &sig);
  std::fprintf(stderr, "kdispatch fake-llm: stopping on %s after %zu requests\n",
               sig == SIGINT ? "SIGINT" : "SIGTERM", server.requests().size());
  return kExitOk;
}

}  // namespace kd::cli
