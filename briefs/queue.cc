#include "briefs/queue.h"

#include <algorithm>
#include <regex>

#include "briefs/page.h"
#include "common/errors.h"
#include "common/files.h"
#include "contract/wiki_layout.h"

namespace kd::briefs {

namespace fs = std::filesystem;

std::vector<QueuedExperiment> in_progress_experiments(const fs::path& wiki,
                                                      const std::vector<std::string>& families) {
  const fs::path root = wiki / contract::kExperimentsDir;
  std::vector<std::string> slugs = families;
  if (slugs.empty()) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(root, ec)) {
      if (e.is_directory() && fs::is_directory(e.path() / "pallas"))
        slugs.push_back(e.path().filename().string());
    }
    if (ec) throw Error("list " + quote(root.string()) + ": " + ec.message());
  }
  std::sort(slugs.begin(), slugs.end());
  static const std::regex kStubName(R"(\d{4}-\d{2}-\d{2}-(v\d{3})-.+\.md)");
  std::vector<QueuedExperiment> out;
  for (const auto& slug : slugs) {
    const fs::path dir = root / slug / "pallas";
    if (!fs::is_directory(dir)) throw Error("family " + slug + " has no " + quote(dir.string()));
    std::vector<QueuedExperiment> family;
    for (const auto& e : fs::directory_iterator(dir)) {
      std::string name = e.path().filename().string();
      std::smatch m;
      if (!e.is_regular_file() || !std::regex_match(name, m, kStubName)) continue;
      std::string rel = fs::relative(e.path(), wiki).string();
      try {
        Page page = parse_page(read_file(e.path()), rel);
        const FrontValue* status = page.front.find("status");
        if (status && !status->is_list && status->scalar == "in_progress")
          family.push_back({slug, m[1].str(), rel, ""});
      } catch (const Error& err) {
        family.push_back({slug, m[1].str(), rel, err.what()});
      }
    }
    std::sort(family.begin(), family.end(),
              [](const auto& a, const auto& b) { return a.experiment < b.experiment; });
    out.insert(out.end(), family.begin(), family.end());
  }
  return out;
}

}  // namespace kd::briefs
