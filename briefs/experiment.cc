#include "briefs/experiment.h"

#include <regex>

#include "common/errors.h"
#include "contract/wiki_layout.h"

namespace kd::briefs {
namespace {

// Stub files for `experiment` in `dir`: <YYYY-MM-DD>-<experiment>-<name>.md.
std::vector<std::string> stub_candidates(const WikiRepo& repo, const std::string& dir,
                                         const std::string& experiment) {
  static const std::regex kName(R"(\d{4}-\d{2}-\d{2}-(v\d{3})-[A-Za-z0-9._-]+\.md)");
  std::vector<std::string> out;
  for (const auto& name : repo.list(dir)) {
    std::smatch m;
    if (std::regex_match(name, m, kName) && m[1] == experiment) out.push_back(dir + "/" + name);
  }
  return out;
}

}  // namespace

bool check_request(const std::string& family, const std::string& experiment, Problems& problems) {
  // Both become wiki paths: nothing but [a-z0-9-] and vNNN may get there.
  bool ok = true;
  if (!contract::is_family_slug(family)) {
    const bool long_one = family.size() > contract::kMaxSlug;
    problems.push_back(
        {"request",
         "family " + quote(long_one ? family.substr(0, 80) + "..." : family) +
             " is not a slug of [a-z0-9-]" +
             (long_one ? " of at most " + std::to_string(contract::kMaxSlug) + " characters"
                       : "")});
    ok = false;
  }
  if (!contract::is_experiment_name(experiment)) {
    problems.push_back(
        {"request", "experiment " + quote(experiment.substr(0, 80)) + " is not vNNN"});
    ok = false;
  }
  return ok;
}

std::optional<Page> PageReader::page(const std::string& path, const std::string& item,
                                     const std::string& what) {
  WikiFile f = repo_.read(path);
  switch (f.status) {
    case WikiFile::Status::missing:
      problems_.push_back({item, what + " " + path + " not found"});
      return std::nullopt;
    case WikiFile::Status::uncommitted:
      problems_.push_back({item, what + " " + path + " is not committed"});
      return std::nullopt;
    case WikiFile::Status::outside:
      problems_.push_back({item, what + " " + path + " is a symlink leading outside the wiki (" +
                                     quote(f.detail) + ")"});
      return std::nullopt;
    case WikiFile::Status::not_a_file:
      problems_.push_back({item, what + " " + path + " is not a file"});
      return std::nullopt;
    case WikiFile::Status::ok:
      break;
  }
  if (f.edited) warnings_.push_back(path + " has uncommitted edits; the committed version is used");
  try {
    return parse_page(f.content, path);
  } catch (const Error& e) {
    problems_.push_back({item, e.what()});
    return std::nullopt;
  }
}

ExperimentPages read_experiment(const WikiRepo& repo, const std::string& family,
                                const std::string& experiment, PageReader& reader,
                                Problems& problems) {
  ExperimentPages out;
  if (auto page = reader.page(binding_path(family), "binding", "family binding"))
    out.binding = parse_binding(*page, family, problems);

  const std::string dir = contract::family_dir(family);
  std::vector<std::string> stubs = stub_candidates(repo, dir, experiment);
  if (stubs.empty()) {
    problems.push_back(
        {"stub", "no experiment page " + dir + "/<YYYY-MM-DD>-" + experiment + "-<slug>.md"});
    return out;
  }
  if (stubs.size() > 1) {
    std::string names;
    for (const auto& s : stubs)
      names += (names.empty() ? "" : ", ") + s;
    problems.push_back({"stub", "more than one page for " + experiment + ": " + names});
    return out;
  }
  // Pre-registration: the stub is what was committed, so an edited stub is refused outright.
  WikiFile f = repo.read(stubs[0]);
  if (f.status == WikiFile::Status::ok && f.edited) {
    problems.push_back({"stub", "stub " + stubs[0] + " has uncommitted edits"});
  } else if (auto page = reader.page(stubs[0], "stub", "stub")) {
    out.stub = parse_stub(*page, problems);
    out.stub->commit = repo.commit();
  }
  return out;
}

Experiment load_experiment(const std::filesystem::path& wiki, const std::string& family,
                           const std::string& experiment) {
  Experiment e;
  if (!check_request(family, experiment, e.problems)) return e;
  try {
    WikiRepo repo(wiki);
    e.wiki_commit = repo.commit();
    PageReader reader(repo, e.problems, e.warnings);
    e.pages = read_experiment(repo, family, experiment, reader, e.problems);
  } catch (const Error& err) {
    e.problems.push_back({"wiki", err.what()});
  }
  return e;
}

}  // namespace kd::briefs
