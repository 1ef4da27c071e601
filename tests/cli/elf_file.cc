#include "tests/cli/elf_file.h"

#include <elf.h>

#include <cstring>
#include <stdexcept>

#include "common/files.h"

namespace kd::test {

ElfFile::ElfFile(const std::string& path) : path_(path), bytes_(read_file(path)) {
  Elf64_Ehdr eh;
  std::memcpy(&eh, at(0, sizeof eh), sizeof eh);
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64)
    throw std::runtime_error(path + ": not a 64-bit ELF file");
  for (size_t i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh;
    std::memcpy(&sh, at(eh.e_shoff + i * eh.e_shentsize, sizeof sh), sizeof sh);
    sections_.push_back({sh.sh_type, sh.sh_flags, sh.sh_offset, sh.sh_size, sh.sh_link});
  }
}

const char* ElfFile::at(size_t offset, size_t n) const {
  if (offset > bytes_.size() || n > bytes_.size() - offset)
    throw std::runtime_error(path_ + ": offset " + std::to_string(offset) + " out of range");
  return bytes_.data() + offset;
}

// The names of a table of `type` (SHT_DYNAMIC entries of DT_NEEDED, or SHT_SYMTAB symbols).
std::vector<std::string> ElfFile::strings_of(uint32_t type, uint32_t entry_size) const {
  std::vector<std::string> out;
  for (const Section& s : sections_) {
    if (s.type != type || s.link >= sections_.size()) continue;
    const Section& strtab = sections_[s.link];
    auto name = [&](uint64_t index) {
      if (index >= strtab.size) throw std::runtime_error(path_ + ": name out of its table");
      const char* p = at(strtab.offset + index, 1);
      return std::string(p, strnlen(p, strtab.size - index));
    };
    for (uint64_t off = 0; off + entry_size <= s.size; off += entry_size) {
      if (type == SHT_DYNAMIC) {
        Elf64_Dyn d;
        std::memcpy(&d, at(s.offset + off, sizeof d), sizeof d);
        if (d.d_tag == DT_NULL) break;
        if (d.d_tag == DT_NEEDED) out.push_back(name(d.d_un.d_val));
      } else {
        Elf64_Sym sym;
        std::memcpy(&sym, at(s.offset + off, sizeof sym), sizeof sym);
        if (sym.st_name != 0) out.push_back(name(sym.st_name));
      }
    }
  }
  return out;
}

std::vector<std::string> ElfFile::needed_libraries() const {
  return strings_of(SHT_DYNAMIC, sizeof(Elf64_Dyn));
}

std::vector<std::string> ElfFile::symbols() const {
  return strings_of(SHT_SYMTAB, sizeof(Elf64_Sym));
}

std::string ElfFile::loaded_bytes() const {
  std::string out;
  for (const Section& s : sections_)
    if ((s.flags & SHF_ALLOC) && s.type != SHT_NOBITS) out.append(at(s.offset, s.size), s.size);
  return out;
}

}  // namespace kd::test
