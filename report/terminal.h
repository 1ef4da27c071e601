// A transcript for the terminal (`kdispatch transcript show FILE`): the same entries the HTML
// viewer draws (transcript_view.h), as text. Colours (ANSI) only when asked: the command asks
// when stdout is a terminal and --no-color was not given. Long contents are folded to their
// first and last lines; paging is the user's pager's.
#pragma once

#include <string>

#include "report/transcript_view.h"

namespace kd::report {

struct TerminalOptions {
  bool colour = false;
  std::size_t fold_lines = 12;  // contents longer than this show head and tail
  std::size_t width = 100;      // rule width
};

std::string render_transcript_terminal(const TranscriptView& v, const TerminalOptions& o);

}  // namespace kd::report
