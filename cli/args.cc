#include "cli/args.h"

#include <algorithm>

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
