// Feeds arbitrary bytes to the receipt reader and validator: they must never crash, and whatever
// the reader accepts must survive a canonical round trip unchanged.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "audit/receipt.h"
#include "audit/receipt_json.h"
#include "common/errors.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  kd::audit::validate_receipt_text(text, "fuzz input");
  try {
    std::string once = kd::audit::canonical_json(kd::audit::parse_receipt_json(text));
    std::string twice = kd::audit::canonical_json(kd::audit::parse_receipt_json(once));
    if (once != twice) std::abort();
  } catch (const kd::Error&) {
  }
  return 0;
}
