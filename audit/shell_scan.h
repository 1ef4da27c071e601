// Recognizes file reads, writes and commits inside shell command text and apply_patch bodies.
// Heuristic by nature (docs/audit.md): it catches the common forms (redirections, tee, sed -i, cp,
// mv, rm, touch, cat/head/tail/sed -n/less, git commit -m, cd) and never claims more.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "audit/event.h"

namespace kd::audit {

// Joins `path` to `cwd` when relative and normalizes it lexically ("a/../b" -> "b").
std::string resolve_path(std::string_view cwd, std::string_view path);

// Emits FileRead / FileWrite / Commit events found in `command`, run in `cwd`. A `cd DIR`
// changes the directory for the parts after it. Fields other than kind, path, text, cwd and
// tool are left for the caller to fill.
void scan_shell(std::string_view command, std::string_view cwd,
                const std::function<void(Event)>& emit);

// Emits one FileWrite per file an apply_patch body adds, updates, moves to or deletes.
void scan_apply_patch(std::string_view patch, std::string_view cwd,
                      const std::function<void(Event)>& emit);

}  // namespace kd::audit
