// Feeds arbitrary argument vectors (NUL-separated) to the command-line parser and the strict
// value readers every command uses: they must never crash, throw only UsageError, and a value
// they accept is within its bounds (finite for numbers), a family they accept a short slug.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli/args.h"
#include "contract/wiki_layout.h"

namespace {

using kd::cli::OptSpec;
using kd::cli::ParsedArgs;
using kd::cli::UsageError;

const std::vector<OptSpec> kSpecs = {
    {"max-turns"}, {"max-cost"}, {"family", true, true}, {"resume", false}, {"status-every"}};

template <typename F>
void usage_only(F&& f) {
  try {
    f();
  } catch (const UsageError&) {
  } catch (...) {
    std::abort();  // anything else would surface as an internal error
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> args(1);
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == 0)
      args.emplace_back();
    else
      args.back().push_back(static_cast<char>(data[i]));
  }
  usage_only([&] {
    ParsedArgs p = kd::cli::parse_args(args, kSpecs);
    usage_only([&] {
      long n = kd::cli::int_option(p, "max-turns", 80, 1, 100'000);
      if (n < 1 || n > 100'000) std::abort();
    });
    usage_only([&] {
      double x = kd::cli::number_option(p, "max-cost", 30, 0, 1e6);
      if (!std::isfinite(x) || x < 0 || x > 1e6) std::abort();
    });
    usage_only([&] {
      for (const auto& f : p.all("family")) {
        kd::cli::check_family(f);
        if (f.size() > kd::contract::kMaxSlug) std::abort();
      }
    });
  });
  return 0;
}
