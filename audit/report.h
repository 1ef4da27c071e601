// Renders an audit report: the auditor's three-line form per finding plus a summary line, or JSON.
#pragma once

#include <string>

#include "audit/auditor.h"

namespace kd::audit {

std::string render_text(const AuditReport& report);
std::string render_json(const AuditReport& report);

}  // namespace kd::audit
