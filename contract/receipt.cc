#include "contract/receipt.h"

#include <cmath>
#include <exception>

#include "common/agent_file.h"
#include "common/errors.h"
#include "common/sha256.h"
#include "contract/receipt_json.h"

namespace kd::contract {
namespace {

using Kind = JsonValue::Kind;

bool is_hex64(std::string_view s) {
  if (s.size() != 64) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

class Checker {
 public:
  Checker(const JsonValue& root, ReceiptCheck& out) : root_(root), out_(out) {}

  void run() {
    check_hash();
    out_.cmd = str(root_, "cmd", true);
    if (!out_.cmd.empty() && out_.cmd != "parity" && out_.cmd != "measure" && out_.cmd != "flags" &&
        out_.cmd != "verify")
      problem("cmd " + quote(out_.cmd) + " is not parity, measure, flags or verify");
    out_.verdict = str(root_, "verdict", true);
    bool is_verify = out_.cmd == "verify";
    if (is_verify)
      for (const char* key :
           {"mode", "gates", "speedup", "p50_ms", "parity_verdict", "measure_verdict", "hlo_audit",
            "reproduction", "artifact_dir", "anomalies"})
        if (!root_.find(key)) problem(std::string("verify receipt has no ") + key);
    out_.mode = str(root_, "mode", false);
    if (is_verify && !out_.mode.empty() && out_.mode != "screen" && out_.mode != "full")
      problem("mode " + quote(out_.mode) + " is not screen or full");
    out_.parity_verdict = str(root_, "parity_verdict", false);
    out_.measure_verdict = str(root_, "measure_verdict", false);
    check_gates();
    out_.speedup = num(root_, "speedup", "speedup");
    if (const JsonValue* p50 = root_.find("p50_ms")) {
      if (p50->kind != Kind::Object) {
        problem("p50_ms is not an object");
      } else {
        out_.p50_baseline_ms = num(*p50, "baseline", "p50_ms.baseline");
        out_.p50_candidate_ms = num(*p50, "candidate", "p50_ms.candidate");
        if (is_verify && (!p50->find("baseline") || !p50->find("candidate")))
          problem("p50_ms lacks baseline or candidate");
      }
    }
    check_speedup();
    check_hlo();
  }

 private:
  void problem(std::string p) { out_.problems.push_back(std::move(p)); }

  std::string str(const JsonValue& obj, const char* key, bool required) {
    const JsonValue* v = obj.find(key);
    if (!v) {
      if (required) problem(std::string("no ") + key);
      return "";
    }
    if (v->kind != Kind::String) {
      problem(std::string(key) + " is not a string");
      return "";
    }
    return v->text;
  }

  std::optional<double> num(const JsonValue& obj, const char* key, const std::string& name) {
    const JsonValue* v = obj.find(key);
    if (!v || v->kind == Kind::Null) return std::nullopt;
    if (v->kind != Kind::Number) {
      problem(name + " is not a number");
      return std::nullopt;
    }
    return v->number();
  }

  void check_hash() {
    const JsonValue* self = root_.find("self_sha256");
    if (!self || self->kind != Kind::String) {
      problem("no self_sha256 string");
      return;
    }
    out_.self_sha256 = self->text;
    if (!is_hex64(self->text)) problem("self_sha256 is not 64 lowercase hex digits");
    JsonValue rest = root_;
    std::erase_if(rest.members, [](const auto& m) { return m.key == "self_sha256"; });
    std::string actual = sha256_hex(canonical_json(rest));
    if (actual != self->text)
      problem("self_sha256 " + self->text + " does not match the content's hash " + actual +
              " (edited after it was written?)");
  }

  void check_gates() {
    const JsonValue* gates = root_.find("gates");
    if (!gates) return;
    if (gates->kind != Kind::Object) {
      problem("gates is not an object");
      return;
    }
    for (const auto& [name, v] : gates->members) {
      if (v.kind != Kind::Bool) {
        problem("gate " + quote(name) + " is not true/false");
        continue;
      }
      out_.gates[name] = v.boolean;
      if (out_.verdict == "PASS" && !v.boolean)
        problem("verdict PASS with gate " + quote(name) + " false");
    }
  }

  void check_speedup() {
    if (!out_.speedup || !out_.p50_baseline_ms || !out_.p50_candidate_ms) return;
    double base = *out_.p50_baseline_ms, cand = *out_.p50_candidate_ms, s = *out_.speedup;
    if (!(cand > 0) || !std::isfinite(base) || !std::isfinite(cand)) {
      if (out_.verdict == "PASS")
        problem("verdict PASS with unusable p50_ms (baseline " + python_float_repr(base) +
                ", candidate " + python_float_repr(cand) + ")");
      return;
    }
    double expected = base / cand;
    if (!(std::fabs(s - expected) <= 1e-6 * std::fabs(expected)))
      problem("speedup " + python_float_repr(s) +
              " is not p50_ms.baseline/p50_ms.candidate = " + python_float_repr(expected));
  }

  void check_hlo() {
    const JsonValue* hlo = root_.find("hlo_audit");
    if (!hlo || hlo->kind == Kind::Null) return;
    if (hlo->kind != Kind::Object) {
      problem("hlo_audit is not an object");
      return;
    }
    out_.hlo_status = str(*hlo, "status", false);
    const JsonValue* count = hlo->find("custom_call_count");
    if (count && count->kind != Kind::Null) {
      if (!count->is_integer_token())
        problem("hlo_audit.custom_call_count is not an integer");
      else
        out_.custom_call_count = std::strtoll(count->text.c_str(), nullptr, 10);
    }
  }

  const JsonValue& root_;
  ReceiptCheck& out_;
};

}  // namespace

ReceiptCheck validate_receipt_text(std::string_view text, std::string_view origin) {
  ReceiptCheck out;
  out.file_sha256 = sha256_hex(text);
  JsonValue root;
  try {
    root = parse_receipt_json(text);
  } catch (const Error& e) {
    out.problems.push_back(std::string(origin) + " is not a receipt: " + e.what());
    return out;
  }
  if (root.kind != Kind::Object) {
    out.problems.push_back(std::string(origin) +
                           " is not a receipt: the top level is not a JSON object");
    return out;
  }
  Checker(root, out).run();
  out.ok = out.problems.empty();
  return out;
}

ReceiptCheck validate_receipt(const std::filesystem::path& path) {
  std::string text;
  try {
    text = read_agent_file(path, kMaxAgentJsonBytes);
  } catch (const Error& e) {
    ReceiptCheck out;
    out.problems.push_back(e.what());
    return out;
  }
  return validate_receipt_text(text, path.string());
}

}  // namespace kd::contract
