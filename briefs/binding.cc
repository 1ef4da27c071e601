#include "briefs/binding.h"

#include <cstdlib>
#include <sstream>

#include "common/errors.h"
#include "contract/wiki_layout.h"

namespace kd::briefs {
namespace {

bool is_number(const std::string& s) {
  if (s.empty()) return false;
  char* end = nullptr;
  std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size();
}

}  // namespace

std::string binding_path(const std::string& family) {
  return contract::binding_page(family);
}

bool valid_parity_spec(const std::string& spec) {
  if (spec == "bit-exact") return true;
  std::istringstream in(spec);
  std::string a, r, extra;
  if (!(in >> a >> r) || (in >> extra)) return false;
  return a.rfind("atol=", 0) == 0 && r.rfind("rtol=", 0) == 0 && is_number(a.substr(5)) &&
         is_number(r.substr(5));
}

Binding parse_binding(const Page& page, const std::string& family, Problems& problems) {
  Binding b;
  b.path = page.source;
  std::vector<std::string> missing;
  auto scalar = [&](const char* key, std::string& out, bool required) {
    const FrontValue* v = page.front.find(key);
    if (!v || (!v->is_list && v->scalar.empty())) {
      if (required) missing.push_back(key);
      return;
    }
    if (v->is_list) {
      problems.push_back(
          {"binding", page.source + ": key " + quote(key) + " must be a single value"});
      return;
    }
    out = v->scalar;
  };
  auto list = [&](const char* key, std::vector<std::string>& out, bool required) {
    const FrontValue* v = page.front.find(key);
    if (!v || (!v->is_list && v->scalar.empty()) || (v->is_list && v->items.empty())) {
      if (required) missing.push_back(key);
      return;
    }
    out = v->is_list ? v->items : std::vector<std::string>{v->scalar};
  };
  scalar("family", b.family, true);
  scalar("home_repo", b.home_repo, true);
  scalar("reference", b.reference, true);
  list("target", b.target, true);
  scalar("integration_branch", b.integration_branch, true);
  scalar("parity_spec", b.parity_spec, true);
  scalar("dtype", b.dtype, false);
  scalar("op_point", b.op_point, true);
  scalar("hardware", b.hardware, true);
  scalar("chip", b.chip, true);
  scalar("campaign_tag", b.campaign_tag, true);
  list("no_peek", b.no_peek, false);
  scalar("archive_remote", b.archive_remote, false);
  scalar("verify_command", b.verify_command, false);
  if (!missing.empty()) {
    std::string names;
    for (const auto& k : missing)
      names += (names.empty() ? "" : ", ") + k;
    problems.push_back({"binding", page.source + " lacks required keys: " + names});
  }
  if (!b.family.empty() && b.family != family)
    problems.push_back({"binding", page.source + ": family is " + quote(b.family) + ", expected " +
                                       quote(family)});
  if (!b.parity_spec.empty() && !valid_parity_spec(b.parity_spec))
    problems.push_back({"parity_spec", page.source + ": " + quote(b.parity_spec) +
                                           " is neither \"atol=<x> rtol=<y>\" nor \"bit-exact\""});
  auto inside = [&](const char* key, const std::string& p) {
    if (!p.empty() && (p[0] == '/' || p.find("..") != std::string::npos))
      problems.push_back({"binding", page.source + ": " + key + " " + quote(p) +
                                         " must be a path inside the home repo"});
  };
  inside("reference", b.reference);
  for (const auto& t : b.target)
    inside("target", t);
  if (b.home_repo.find('/') != std::string::npos || b.home_repo == "..")
    problems.push_back({"binding", page.source + ": home_repo " + quote(b.home_repo) +
                                       " must be a single directory name under raw/code/"});
  return b;
}

}  // namespace kd::briefs
