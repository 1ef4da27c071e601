#include "audit/importer.h"

#include <string_view>

#include "audit/json_skim.h"
#include "audit/line_reader.h"

namespace kd::audit {

const char* format_name(Format f) {
  switch (f) {
    case Format::Kdispatch:
      return "kdispatch";
    case Format::ClaudeCode:
      return "claude-code";
    case Format::CodexRollout:
      return "codex-rollout";
    case Format::CodexExec:
      return "codex-exec";
    case Format::Unknown:
      break;
  }
  return "unknown";
}

const char* event_kind_name(EventKind kind) {
  switch (kind) {
    case EventKind::ModelText:
      return "model_text";
    case EventKind::FileRead:
      return "file_read";
    case EventKind::FileWrite:
      return "file_write";
    case EventKind::Command:
      return "command";
    case EventKind::Commit:
      return "commit";
    case EventKind::Subagent:
      return "subagent";
    case EventKind::Violation:
      return "violation";
    case EventKind::Finish:
      return "finish";
    case EventKind::Supervision:
      return "supervision";
  }
  return "?";
}

void ImportState::emit(Event e) {
  e.line = line;
  if (e.ts.empty()) e.ts = ts;
  e.role = role;
  if (e.cwd.empty()) e.cwd = cwd;
  ++stats->events;
  sink->event(e);
}

void ImportState::set_cwd(const std::string& dir) {
  if (dir.empty()) return;
  cwd = dir;
  if (!cwd_reported && sink->cwd) {
    cwd_reported = true;
    sink->cwd(dir);
  }
}

std::string str_of(const nlohmann::json& obj, const char* key) {
  if (!obj.is_object()) return "";
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : "";
}

std::string join_argv(const nlohmann::json& argv) {
  if (argv.is_string()) return argv.get<std::string>();
  std::string out;
  if (!argv.is_array()) return out;
  for (const auto& a : argv) {
    if (!a.is_string()) continue;
    if (!out.empty()) out += ' ';
    std::string s = a.get<std::string>();
    out += '\'';
    for (char c : s)
      out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += '\'';
  }
  return out;
}

namespace {

constexpr size_t kMalformedListed = 10;

Format detect(const nlohmann::json& rec) {
  if (!rec.is_object()) return Format::Unknown;
  if (rec.contains("seq") && rec.contains("prev") && rec.contains("hash")) return Format::Kdispatch;
  if (rec.contains("payload") || rec.contains("record_type") ||
      (rec.contains("instructions") && rec.contains("id")))
    return Format::CodexRollout;
  std::string type = str_of(rec, "type");
  if (type.rfind("thread.", 0) == 0 || type.rfind("turn.", 0) == 0 || type.rfind("item.", 0) == 0)
    return Format::CodexExec;
  // Gemini CLI's metadata line also has a sessionId, but no record type.
  if (!type.empty() && (rec.contains("sessionId") || rec.contains("uuid") || type == "summary" ||
                        type == "file-history-snapshot"))
    return Format::ClaudeCode;
  return Format::Unknown;
}

bool has_escape(std::string_view s) {
  return s.find('\\') != std::string_view::npos;
}

// Records no rule reads beyond their envelope are handled from a skim, never parsed: Claude Code
// lines other than the assistant's (tool results carry whole files) and kdispatch requests,
// tool results and notes. Returns false when the record needs a full parse.
bool handled_by_skim(std::string_view line, Format format, ImportState& st) {
  if (format == Format::Kdispatch) {
    SkimField f[] = {{"type", {}}};
    if (!skim_object(line, f, 1) || !f[0].value) return false;
    return *f[0].value == "tool_result" || *f[0].value == "request" || *f[0].value == "note";
  }
  if (format != Format::ClaudeCode) return false;
  SkimField f[] = {{"type", {}}, {"cwd", {}}};
  if (!skim_object(line, f, 2) || !f[0].value || *f[0].value == "assistant" ||
      has_escape(*f[0].value))
    return false;
  if (f[1].value && !has_escape(*f[1].value)) st.set_cwd(std::string(*f[1].value));
  if (!claude_type_known(*f[0].value))
    st.unknown(f[0].value->empty() ? "record without type" : std::string(*f[0].value));
  return true;
}

}  // namespace

FileStats import_file(const std::filesystem::path& path, const ImportOptions& options,
                      const ImportSink& sink) {
  FileStats stats;
  stats.path = path.string();
  LineReader reader(path);
  contract::ChainVerifier chain;
  ImportState st;
  st.sink = &sink;
  st.stats = &stats;
  std::string_view line;
  bool chain_active = options.check_chain;
  while (reader.next(&line)) {
    st.line = reader.line_number();
    // A kdispatch transcript is recognizable from its fixed field order without parsing.
    if (stats.format == Format::Unknown && line.substr(0, 7) == "{\"seq\":")
      stats.format = Format::Kdispatch;
    if (stats.format == Format::Kdispatch && chain_active) chain.feed(line);
    if (line.empty() || (line.size() == 1 && line[0] == '\r')) continue;
    if (stats.format == Format::Kdispatch && !options.want_events) continue;
    if (handled_by_skim(line, stats.format, st)) continue;
    nlohmann::json rec = nlohmann::json::parse(line, nullptr, false);
    if (rec.is_discarded()) {
      if (reader.last_line_torn()) break;
      ++stats.malformed;
      if (stats.malformed_lines.size() < kMalformedListed) stats.malformed_lines.push_back(st.line);
      continue;
    }
    if (stats.format == Format::Unknown) stats.format = detect(rec);
    st.ts.clear();
    try {
      switch (stats.format) {
        case Format::Kdispatch:
          import_kdispatch_record(rec, st);
          break;
        case Format::ClaudeCode:
          import_claude_record(rec, st);
          break;
        case Format::CodexRollout:
          import_codex_record(rec, st);
          break;
        case Format::CodexExec:
          import_codex_exec_record(rec, st);
          break;
        case Format::Unknown:
          st.unknown(rec.is_object() ? "line without a known harness shape" : "non-object line");
          break;
      }
    } catch (const nlohmann::json::exception&) {
      // A record of a known type with fields of unexpected types: keep going, report it.
      ++stats.malformed;
      if (stats.malformed_lines.size() < kMalformedListed) stats.malformed_lines.push_back(st.line);
    }
  }
  stats.lines = reader.line_number();
  stats.bytes = reader.bytes_read();
  stats.torn_last_line = reader.last_line_torn();
  if (stats.format == Format::Kdispatch && chain_active)
    stats.chain = chain.finish(!stats.torn_last_line);
  return stats;
}

}  // namespace kd::audit
