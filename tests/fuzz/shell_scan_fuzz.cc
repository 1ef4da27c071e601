// Feeds arbitrary bytes to the shell scanner and the apply_patch scanner: they must never crash
// or hang, every path they report is absolute and lexically normal (resolved against the cwd),
// and a harmless command in front ("true; ") changes nothing they report.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "audit/shell_scan.h"

namespace {

using kd::audit::Event;
using kd::audit::EventKind;

std::vector<Event> scan(std::string_view command) {
  std::vector<Event> out;
  kd::audit::scan_shell(command, "/w/tree", [&](Event e) { out.push_back(std::move(e)); });
  return out;
}

bool normal_absolute(const std::string& path) {
  return !path.empty() && path[0] == '/' && kd::audit::resolve_path("", path) == path;
}

void check_events(const std::vector<Event>& events) {
  for (const auto& e : events) {
    if (e.tool.empty() || e.cwd.empty() || e.cwd[0] != '/') std::abort();
    if (e.kind == EventKind::Commit) {
      if (!e.path.empty()) std::abort();
    } else if (!normal_absolute(e.path)) {
      std::abort();
    }
  }
}

bool same(const std::vector<Event>& a, const std::vector<Event>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].kind != b[i].kind || a[i].path != b[i].path || a[i].text != b[i].text ||
        a[i].tool != b[i].tool || a[i].cwd != b[i].cwd)
      return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::vector<Event> events = scan(text);
  check_events(events);
  if (!same(events, scan("true; " + std::string(text)))) std::abort();
  std::vector<Event> patch;
  kd::audit::scan_apply_patch(text, "/w/tree", [&](Event e) { patch.push_back(std::move(e)); });
  check_events(patch);
  return 0;
}
