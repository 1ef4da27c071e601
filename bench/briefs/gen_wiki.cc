// Generates a benchmark wiki: the example wiki plus filler pages up to --pages in total (other
// families' bindings and filed experiment pages, class pages, concept pages) with realistic
// sizes, committed in git. Usage: bench_gen_wiki DEST [--pages N]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>

#include "common/errors.h"
#include "common/files.h"
#include "examples/example_wiki.h"

namespace fs = std::filesystem;

namespace {

// A page of roughly `bytes` bytes: front matter, sections, a fenced block, prose.
std::string filler_page(std::mt19937& rng, const std::string& title, size_t bytes) {
  static const char* kWords[] = {"kernel", "block",   "tile",     "memory",  "bound",  "reduction",
                                 "parity", "receipt", "pipeline", "latency", "vector", "grid"};
  std::uniform_int_distribution<int> word(0, 11);
  std::string p = "---\ntitle: \"" + title + "\"\ntype: concept\ntags: [bench, filler]\n---\n\n";
  int section = 0;
  while (p.size() < bytes) {
    p += "## Section " + std::to_string(++section) + "\n\n";
    for (int line = 0; line < 8; ++line) {
      for (int w = 0; w < 14; ++w)
        p += std::string(kWords[word(rng)]) + " ";
      p += "\n";
    }
    if (section % 3 == 0) p += "\n```python\n# a comment, not a heading\nx = 1\n```\n";
    p += "\n";
  }
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_gen_wiki DEST [--pages N]\n");
    return 64;
  }
  fs::path dest = argv[1];
  int pages = 5000;
  if (argc == 4 && std::string(argv[2]) == "--pages") pages = std::atoi(argv[3]);
  try {
    auto ex = kd::examples::materialize_example(dest);
    int have = 0;
    for (auto& e : fs::recursive_directory_iterator(dest / "wiki"))
      if (e.is_regular_file()) ++have;
    std::mt19937 rng(42);
    // Page sizes follow the seed wiki's spread: mostly 2-12 KB, some up to 40 KB.
    std::lognormal_distribution<double> size(std::log(6000.0), 0.7);
    for (int i = 0; have < pages; ++i) {
      std::string fam = "family-" + std::to_string(i / 20);
      fs::path rel;
      switch (i % 20) {
        case 0:
          rel = "wiki/kernel_experiments/" + fam + "/pallas/program.md";
          break;
        case 1:
          rel = "wiki/kernels/classes/filler-" + std::to_string(i) + ".md";
          break;
        case 2:
          rel = "wiki/kernels/" + fam + ".md";
          break;
        default:
          if (i % 20 < 12) {
            char name[64];
            std::snprintf(name, sizeof name, "2026-%02d-%02d-v%03d-%s.md", 1 + i % 12, 1 + i % 28,
                          i % 20, fam.c_str());
            rel = "wiki/kernel_experiments/" + fam + "/pallas/" + name;
          } else {
            rel = "wiki/concepts/concept-" + std::to_string(i) + ".md";
          }
      }
      fs::create_directories((dest / rel).parent_path());
      size_t bytes = std::min<size_t>(40000, std::max<size_t>(800, size_t(size(rng))));
      kd::write_file_atomic(dest / rel, filler_page(rng, rel.stem().string(), bytes));
      ++have;
    }
    std::string commit = kd::examples::commit_example(dest, "main", "bench: filler pages");
    std::printf("%d pages at %s (commit %s); brief: --family %s --experiment %s\n", have,
                dest.c_str(), commit.c_str(), kd::examples::kExampleFamily,
                kd::examples::kExampleExperiment);
  } catch (const kd::Error& e) {
    std::fprintf(stderr, "bench_gen_wiki: %s\n", e.what());
    return 70;
  }
  return 0;
}
