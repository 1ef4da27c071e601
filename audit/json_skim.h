// Reads a few top-level string members of a one-line JSON object without building it, so the
// importers can skip records whose bulk (tool results, file bodies) no rule needs.
#pragma once

#include <optional>
#include <string_view>

namespace kd::audit {

struct SkimField {
  std::string_view key;
  std::optional<std::string_view> value;  // the raw string body between the quotes (escapes kept)
};

// Walks the top level of `line`, filling each field whose key appears with a string value; where
// a key repeats, its last value counts, as in a full parse. Returns false when the line is not a
// well-formed object at the top level, or has a key with an escape in it (the caller then parses
// it fully). String bodies are scanned, never decoded.
bool skim_object(std::string_view line, SkimField* fields, size_t count);

template <size_t N>
bool skim_object(std::string_view line, SkimField (&fields)[N]) {
  return skim_object(line, fields, N);
}

}  // namespace kd::audit
