#include "examples/example_wiki.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>

#include "common/errors.h"
#include "common/files.h"
#include "common/policy_path.h"
#include "git/repo.h"

namespace fs = std::filesystem;

namespace kd::examples {
namespace {

constexpr const char* kHomeRepo = "normkit";
constexpr const char* kHomeBranch = "integration";

void copy_tree(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::create_directories(to, ec);
  fs::copy(from, to, fs::copy_options::recursive | fs::copy_options::overwrite_existing, ec);
  if (ec)
    throw Error("copy(" + quote(from.string()) + " -> " + quote(to.string()) +
                "): " + ec.message());
}

// A path from case.json: relative, without "..", so an overlay cannot touch anything else.
fs::path inside(const fs::path& root, const std::string& rel, const fs::path& manifest) {
  if (rel.empty() || rel[0] == '/' || rel.find("..") != std::string::npos)
    throw Error(manifest.string() + ": path " + quote(rel) + " must be relative, without '..'");
  return root / rel;
}

}  // namespace

std::string commit_example(const fs::path& dir, const std::string& branch,
                           const std::string& message, const std::vector<std::string>& leave_out) {
  return git::commit_directory(dir, branch, message, kExampleTime, leave_out);
}

std::vector<RefusalCase> example_refusal_cases() {
  std::vector<RefusalCase> out;
  fs::path root = examples_dir() / "refusal-cases";
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(root))
    if (e.is_directory()) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  for (const auto& d : dirs) {
    fs::path manifest = d / "case.json";
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(read_file(manifest));
      out.push_back({d.filename().string(), j.at("item").get<std::string>(),
                     j.at("reason").get<std::string>()});
    } catch (const nlohmann::json::exception& e) {
      throw Error(manifest.string() + ": " + e.what());
    }
  }
  return out;
}

MaterializedExample materialize_example(const fs::path& dest, const ExampleOptions& options) {
  std::error_code ec;
  if (fs::exists(dest, ec) && !fs::is_empty(dest, ec))
    throw Error("materialize_example(" + quote(dest.string()) + "): directory is not empty");
  fs::path examples = examples_dir();
  copy_tree(examples / "wiki", dest);

  nlohmann::json manifest = nlohmann::json::object();
  fs::path case_dir;
  if (options.refusal_case) {
    case_dir = examples / "refusal-cases" / *options.refusal_case;
    fs::path mpath = case_dir / "case.json";
    try {
      manifest = nlohmann::json::parse(read_file(mpath));
    } catch (const nlohmann::json::exception& e) {
      throw Error(mpath.string() + ": " + e.what());
    }
    if (fs::exists(case_dir / "files")) copy_tree(case_dir / "files", dest);
    for (const auto& rel : manifest.value("delete", std::vector<std::string>{}))
      fs::remove(inside(dest, rel, mpath));
    std::map<std::string, std::string> links =
        manifest.value("symlinks", std::map<std::string, std::string>{});
    for (const auto& [rel, target] : links) {
      fs::path link = inside(dest, rel, mpath);
      fs::remove(link);
      fs::create_symlink(target, link, ec);
      if (ec) throw Error("symlink(" + quote(link.string()) + "): " + ec.message());
    }
  }

  MaterializedExample out;
  out.wiki = dest;
  std::vector<std::string> untrack = manifest.value("untrack", std::vector<std::string>{});
  for (const auto& rel : untrack)
    inside(dest, rel, case_dir / "case.json");
  out.wiki_commit = commit_example(dest, "main", "K3(rms-norm v002): stub — example wiki", untrack);
  if (!case_dir.empty() && fs::exists(case_dir / "working")) copy_tree(case_dir / "working", dest);

  fs::path home = dest / "raw" / "code" / kHomeRepo;
  copy_tree(examples / "home" / kHomeRepo, home);
  out.home_commit = commit_example(home, kHomeBranch, "normkit: naive rms-norm and its reference");
  return out;
}

void add_example_families(const fs::path& wiki, int families, int experiments) {
  const fs::path dir = wiki / "wiki/kernel_experiments";
  const std::string binding = read_file(dir / "rms-norm/pallas/program.md");
  const std::string stub = read_file(dir / "rms-norm/pallas/2026-11-30-v002-rms-norm.md");
  for (int f = 0; f < families; ++f) {
    const std::string slug = "fam" + std::to_string(f);
    const fs::path pallas = dir / slug / "pallas";
    fs::create_directories(pallas);
    std::string b = std::regex_replace(binding, std::regex("family: rms-norm"), "family: " + slug);
    b = std::regex_replace(b, std::regex("chip: \"0\""), "chip: \"" + std::to_string(f) + "\"");
    write_file_atomic(pallas / "program.md", b);
    for (int e = 1; e <= experiments; ++e) {
      char id[16];
      std::snprintf(id, sizeof id, "v%03d", e);
      write_file_atomic(pallas / ("2026-12-01-" + std::string(id) + "-" + slug + ".md"), stub);
    }
  }
  const auto [sha, branch] = git::head_of(wiki);
  commit_example(wiki, branch, "examples: " + std::to_string(families) + " copies of the family");
}

}  // namespace kd::examples
