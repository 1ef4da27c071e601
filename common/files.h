// Whole-file reads and durable writes with errors that name the path.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace kd {

// Reads the whole file; throws kd::Error naming the call and the path.
std::string read_file(const std::filesystem::path& path);

// Writes to a temporary sibling, fsyncs it, renames it over `path` and fsyncs the directory,
// so a crash leaves either the old or the new content, never a torn file.
void write_file_atomic(const std::filesystem::path& path, std::string_view data);

// The same rename, without the fsyncs: a reader never sees a torn file, but a crash may leave
// the old content. For outputs regenerated at will (the report's pages), where a sync per file
// would cost more than the writing.
void write_file_replace(const std::filesystem::path& path, std::string_view data);

}  // namespace kd
