// Feeds arbitrary bytes to the wiki page parser and everything that reads a parsed page: it must
// either parse or throw kd::Error, never crash, and sections must lie inside the body.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "briefs/binding.h"
#include "briefs/page.h"
#include "briefs/stub.h"
#include "common/errors.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    kd::briefs::Page page = kd::briefs::parse_page(text, "fuzz.md");
    for (const auto& s : page.sections) {
      if (s.begin > s.content || s.content > s.end || s.end > page.body.size()) std::abort();
      (void)page.text(s);
    }
    kd::briefs::Problems problems;
    (void)kd::briefs::parse_stub(page, problems);
    (void)kd::briefs::parse_binding(page, "fuzz", problems);
  } catch (const kd::Error&) {
  }
  return 0;
}
