// Feeds arbitrary bytes to the server-sent events parser: it must never crash, and it must give
// the same events however the stream is split: whole, one byte at a time, and at cut points the
// first bytes choose (mid-line, mid-CRLF, mid-BOM, mid-UTF-8 all included).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "agents/sse.h"

namespace {

using kd::agents::SseEvent;
using kd::agents::SseParser;

std::vector<SseEvent> parse(std::string_view stream, const std::vector<size_t>& cuts) {
  std::vector<SseEvent> out;
  SseParser p([&](const SseEvent& e) { out.push_back(e); });
  size_t from = 0;
  for (size_t cut : cuts) {
    p.feed(stream.substr(from, cut - from));
    from = cut;
  }
  p.feed(stream.substr(from));
  p.finish();
  return out;
}

bool same(const std::vector<SseEvent>& a, const std::vector<SseEvent>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].name != b[i].name || a[i].data != b[i].data) return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 4) return 0;
  // Four bytes pick up to four cut points; the rest is the stream.
  const std::string_view stream(reinterpret_cast<const char*>(data) + 4, size - 4);
  std::vector<size_t> cuts;
  for (int i = 0; i < 4 && !stream.empty(); ++i)
    cuts.push_back(data[i] % (stream.size() + 1));
  std::sort(cuts.begin(), cuts.end());
  std::vector<size_t> every;
  for (size_t i = 1; i < stream.size(); ++i)
    every.push_back(i);
  const std::vector<SseEvent> whole = parse(stream, {});
  if (!same(whole, parse(stream, cuts))) std::abort();
  if (!same(whole, parse(stream, every))) std::abort();
  for (const auto& e : whole)
    if (e.name.empty()) std::abort();  // "message" when the stream named none
  return 0;
}
