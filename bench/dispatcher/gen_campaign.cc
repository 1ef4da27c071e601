// Generates the simulated campaign's wiki: the example wiki plus F families (fam0..famF-1), each
// a copy of the example family bound to its own chip (fam<i> on chip i), with E committed
// in_progress experiments v001..vE. Usage: bench_gen_campaign DEST [--families F] [--experiments E]
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <string>

#include "common/errors.h"
#include "common/files.h"
#include "examples/example_wiki.h"
#include "git/repo.h"

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
    const fs::path dir = wiki / "wiki/kernel_experiments";
    std::string binding = kd::read_file(dir / "rms-norm/pallas/program.md");
    std::string stub = kd::read_file(dir / "rms-norm/pallas/2026-11-30-v002-rms-norm.md");
    for (int f = 0; f < families; ++f) {
      std::string slug = "fam" + std::to_string(f);
      fs::path pallas = dir / slug / "pallas";
      fs::create_directories(pallas);
      std::string b =
          std::regex_replace(binding, std::regex("family: rms-norm"), "family: " + slug);
      b = std::regex_replace(b, std::regex("chip: \"0\""), "chip: \"" + std::to_string(f) + "\"");
      kd::write_file_atomic(pallas / "program.md", b);
      for (int e = 1; e <= experiments; ++e) {
        char id[16];
        std::snprintf(id, sizeof id, "v%03d", e);
        kd::write_file_atomic(pallas / ("2026-12-01-" + std::string(id) + "-" + slug + ".md"),
                              stub);
      }
    }
    auto [sha, branch] = kd::git::head_of(wiki);
    kd::examples::commit_example(wiki, branch, "bench: the simulated campaign's families");
    std::printf("%s\n", wiki.c_str());
  } catch (const kd::Error& e) {
    std::fprintf(stderr, "bench_gen_campaign: %s\n", e.what());
    return 70;
  }
  return 0;
}
