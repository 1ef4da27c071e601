// A small declarative command-line parser shared by the subcommands.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace kd::cli {

// Bad command line: the CLI prints the message and the command's usage, and exits 64.
class UsageError : public std::runtime_error {
 public:
  explicit UsageError(const std::string& m) : std::runtime_error(m) {}
};

struct OptSpec {
  std::string name;         // without the leading "--"
  bool takes_value = true;  // false: a boolean switch
  bool repeatable = false;
};

struct ParsedArgs {
  std::map<std::string, std::vector<std::string>> values;  // switches map to {"true"}
  std::vector<std::string> positional;
  std::vector<std::string> rest;  // everything after "--"

  bool has(const std::string& name) const { return values.count(name) > 0; }
  std::string get(const std::string& name, const std::string& fallback = "") const;
  // The value of a required option; throws UsageError naming it when absent.
  std::string required(const std::string& name) const;
  std::vector<std::string> all(const std::string& name) const;
};

// Strict values of options, or UsageError naming the option: the whole text must be the number
// (no "3abc"), within [min, max], never NaN or infinite.
long int_option(const ParsedArgs& p, const std::string& name, long fallback, long min, long max);
double number_option(const ParsedArgs& p, const std::string& name, double fallback, double min,
                     double max);
// A family slug or an experiment name given on the command line, or UsageError.
void check_family(const std::string& family);
void check_experiment(const std::string& experiment);

// Accepts "--name value" and "--name=value"; rejects unknown options, a missing value and a
// non-repeatable option given twice, naming the option.
ParsedArgs parse_args(const std::vector<std::string>& args, const std::vector<OptSpec>& specs);

}  // namespace kd::cli
