#include <cstdio>

#include "cli/args.h"
#include "cli/commands.h"
#include "common/exit_codes.h"
#include "common/files.h"
#include "contract/receipt.h"
#include "contract/receipt_signature.h"

namespace kd::cli {

// kdispatch receipt verify FILE [--key FILE | --run-root DIR]: 0 for an intact, self-consistent
// receipt whatever its verdict. With the dispatcher's key (named, or the run root's), a receipt
// that carries kdispatch's signature must carry a valid one, and one measured by kdispatch's
// parent must carry one at all.
int cmd_receipt(const Args& args) {
  ParsedArgs p = parse_args(args, {{"key"}, {"run-root"}});
  if (p.positional.size() != 2 || p.positional[0] != "verify")
    throw UsageError("expected: verify FILE [--key FILE | --run-root DIR]");
  if (p.has("key") && p.has("run-root"))
    throw UsageError("--key and --run-root exclude each other");
  const std::string& file = p.positional[1];
  contract::ReceiptCheck r = contract::validate_receipt(file);
  std::optional<std::string> key;
  if (p.has("key")) {
    key = contract::load_signing_key(p.get("key"));
    if (!key) throw UsageError("no key file " + p.get("key"));
  } else if (p.has("run-root")) {
    key = contract::load_signing_key(contract::signing_key_path(p.get("run-root")));
  }
  std::string signature = "unchecked (no key)";
  if (r.ok && key) {
    const std::string text = read_file(file);
    contract::SignatureCheck sig = contract::check_receipt_signature(text, *key);
    const bool parents = text.find("\"measured_by\"") != std::string::npos;
    if (sig.ok) {
      signature = "valid";
    } else if (sig.present) {
      r.ok = false;
      r.problems.push_back(sig.problem);
    } else if (parents) {
      r.ok = false;
      r.problems.push_back("a receipt of kdispatch's measuring parent without its signature");
    } else {
      signature = "none (an external tool's receipt)";
    }
  }
  if (!r.ok) {
    std::printf("BAD %s\n", file.c_str());
    for (const auto& problem : r.problems)
      std::printf("  %s\n", problem.c_str());
    return kExitRefused;
  }
  std::printf("OK %s: cmd=%s verdict=%s", file.c_str(), r.cmd.c_str(), r.verdict.c_str());
  if (!r.mode.empty()) std::printf(" mode=%s", r.mode.c_str());
  if (r.speedup) std::printf(" speedup=%.6g", *r.speedup);
  std::printf(" self_sha256=%s signature=%s\n", r.self_sha256.c_str(), signature.c_str());
  return kExitOk;
}

}  // namespace kd::cli
