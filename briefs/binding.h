// The family binding (wiki/kernel_experiments/<slug>/pallas/program.md): its front matter keys,
// typed (docs/briefs.md).
#pragma once

#include <string>
#include <vector>

#include "briefs/page.h"
#include "briefs/problem.h"

namespace kd::briefs {

struct Binding {
  std::string path;  // wiki-relative
  std::string family;
  std::string home_repo;
  std::string reference;            // parity oracle inside the home repo; never edited
  std::vector<std::string> target;  // ship path(s) inside the home repo
  std::string integration_branch;
  std::string parity_spec;  // "atol=<x> rtol=<y>" or "bit-exact"
  std::string dtype = "bf16";
  std::string op_point;
  std::string hardware;
  std::string chip;
  std::string campaign_tag;
  std::vector<std::string> no_peek;
  std::string archive_remote;
  std::string verify_command;
};

std::string binding_path(const std::string& family);

// Reads the binding's keys from `page`; every missing or malformed key is appended to `problems`
// (all of them, not only the first). `family` is the slug the binding must name.
Binding parse_binding(const Page& page, const std::string& family, Problems& problems);

// True for "bit-exact" and for "atol=<number> rtol=<number>".
bool valid_parity_spec(const std::string& spec);

}  // namespace kd::briefs
