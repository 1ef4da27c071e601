// Markdown pieces the author brief and the verifier brief share.
#pragma once

#include <string>
#include <vector>

#include "briefs/brief.h"

namespace kd::briefs {

// `s` as inline code.
std::string code(const std::string& s);

// Appends each pasted part under a heading naming its source, section and sha256, then the
// warnings, and ends the document with exactly one newline.
void append_parts_and_warnings(std::string& m, const std::vector<PastedPart>& reading,
                               const std::vector<std::string>& warnings);

}  // namespace kd::briefs
