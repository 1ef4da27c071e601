// What the CLI tests read from the programs' ELF files: the shared libraries they need, their
// symbols, and the bytes they load at run time (where a path baked in at build time would be).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kd::test {

class ElfFile {
 public:
  // Reads a 64-bit ELF file; throws std::runtime_error naming it otherwise.
  explicit ElfFile(const std::string& path);

  // The DT_NEEDED entries; empty for a static executable.
  std::vector<std::string> needed_libraries() const;
  // The names in the symbol table (.symtab); empty when stripped.
  std::vector<std::string> symbols() const;
  // The contents of every section loaded at run time (SHF_ALLOC), concatenated; debug
  // information and the symbol table are not among them.
  std::string loaded_bytes() const;

 private:
  struct Section {
    uint32_t type;
    uint64_t flags, offset, size;
    uint32_t link;
  };
  const char* at(size_t offset, size_t n) const;
  std::vector<std::string> strings_of(uint32_t type, uint32_t entry_size) const;

  std::string path_;
  std::string bytes_;
  std::vector<Section> sections_;
};

}  // namespace kd::test
