// Feeds arbitrary bytes to the receipt reader and validator: they must never crash, and whatever
// the reader accepts must survive a canonical round trip unchanged.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "common/errors.h"
#include "contract/receipt.h"
#include "contract/receipt_json.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  kd::contract::validate_receipt_text(text, "fuzz input");
  try {
    std::string once = kd::contract::canonical_json(kd::contract::parse_receipt_json(text));
    std::string twice = kd::contract::canonical_json(kd::contract::parse_receipt_json(once));
    if (once != twice) std::abort();
  } catch (const kd::Error&) {
  }
  return 0;
}
