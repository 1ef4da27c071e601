#include "cli/args.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "contract/wiki_layout.h"

namespace kd::cli {

std::string ParsedArgs::get(const std::string& name, const std::string& fallback) const {
  auto it = values.find(name);
  return it == values.end() ? fallback : it->second.back();
}

std::string ParsedArgs::required(const std::string& name) const {
  auto it = values.find(name);
  if (it == values.end()) throw UsageError("missing required option --" + name);
  return it->second.back();
}

std::vector<std::string> ParsedArgs::all(const std::string& name) const {
  auto it = values.find(name);
  return it == values.end() ? std::vector<std::string>{} : it->second;
}

namespace {

// The option's text in a message: long values cut, so a 50,000-character one stays readable.
std::string shown(const std::string& v) {
  return "\"" + (v.size() > 40 ? v.substr(0, 40) + "..." : v) + "\"";
}

std::string bound(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

long int_option(const ParsedArgs& p, const std::string& name, long fallback, long min, long max) {
  if (!p.has(name)) return fallback;
  const std::string v = p.get(name);
  errno = 0;
  char* end = nullptr;
  long n = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || errno == ERANGE ||
      std::isspace(static_cast<unsigned char>(v[0])))
    throw UsageError("--" + name + " needs a whole number, got " + shown(v));
  if (n < min || n > max)
    throw UsageError("--" + name + " must be between " + std::to_string(min) + " and " +
                     std::to_string(max) + ", got " + shown(v));
  return n;
}

double number_option(const ParsedArgs& p, const std::string& name, double fallback, double min,
                     double max) {
  if (!p.has(name)) return fallback;
  const std::string v = p.get(name);
  errno = 0;
  char* end = nullptr;
  double x = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(x) ||
      std::isspace(static_cast<unsigned char>(v[0])))
    throw UsageError("--" + name + " needs a finite number, got " + shown(v));
  if (x < min || x > max)
    throw UsageError("--" + name + " must be between " + bound(min) + " and " + bound(max) +
                     ", got " + shown(v));
  return x;
}

void check_family(const std::string& family) {
  if (!contract::is_family_slug(family))
    throw UsageError("--family must be a slug of [a-z0-9-] of at most " +
                     std::to_string(contract::kMaxSlug) + " characters, got " + shown(family));
}

void check_experiment(const std::string& experiment) {
  if (!contract::is_experiment_name(experiment))
    throw UsageError("--experiment must look like v001, got " + shown(experiment));
}

ParsedArgs parse_args(const std::vector<std::string>& args, const std::vector<OptSpec>& specs) {
  ParsedArgs out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      out.rest.assign(args.begin() + static_cast<long>(i) + 1, args.end());
      break;
    }
    if (a.rfind("--", 0) != 0 || a.size() == 2) {
      out.positional.push_back(a);
      continue;
    }
    std::string name = a.substr(2);
    std::string value;
    bool inline_value = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
      inline_value = true;
    }
    auto spec =
        std::find_if(specs.begin(), specs.end(), [&](const OptSpec& s) { return s.name == name; });
    if (spec == specs.end()) throw UsageError("unknown option --" + name);
    if (!spec->takes_value) {
      if (inline_value) throw UsageError("option --" + name + " takes no value");
      value = "true";
    } else if (!inline_value) {
      if (i + 1 >= args.size()) throw UsageError("option --" + name + " needs a value");
      value = args[++i];
    }
    auto& slot = out.values[name];
    if (!slot.empty() && !spec->repeatable) throw UsageError("option --" + name + " given twice");
    slot.push_back(value);
  }
  return out;
}

}  // namespace kd::cli
