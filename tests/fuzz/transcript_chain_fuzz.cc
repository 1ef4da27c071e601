// Feeds arbitrary bytes to the transcript chain verifier line by line: it must never crash and
// must never accept input it did not seal.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "contract/transcript_chain.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  kd::contract::ChainVerifier v;
  size_t start = 0;
  for (size_t nl; (nl = text.find('\n', start)) != std::string_view::npos; start = nl + 1) {
    if (!v.feed(text.substr(start, nl - start))) break;
  }
  v.finish(start == text.size());
  return 0;
}
