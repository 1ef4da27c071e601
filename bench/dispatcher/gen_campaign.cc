// Generates the simulated campaign's wiki: the example wiki plus F families (fam0..famF-1), each
// a copy of the example family bound to its own chip (fam<i> on chip i), with E committed
// in_progress experiments v001..vE. Usage: bench_gen_campaign DEST [--families F] [--experiments E]
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "common/errors.h"
#include "examples/example_wiki.h"

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_gen_campaign DEST [--families F] [--experiments E]\n");
    return 64;
  }
  int families = 8, experiments = 3;
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--families") families = std::atoi(argv[i + 1]);
    if (flag == "--experiments") experiments = std::atoi(argv[i + 1]);
  }
  try {
    fs::path wiki = argv[1];
    kd::examples::materialize_example(wiki);
    kd::examples::add_example_families(wiki, families, experiments);
    std::printf("%s\n", wiki.c_str());
  } catch (const kd::Error& e) {
    std::fprintf(stderr, "bench_gen_campaign: %s\n", e.what());
    return 70;
  }
  return 0;
}
