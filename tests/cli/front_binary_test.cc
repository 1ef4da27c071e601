// `kdispatch` is a lean front (help, brief) that execs kdispatch-full for every other command:
// it must not link the libraries only the other commands need, and a missing full binary is an
// error that names it.
#include <elf.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "common/files.h"
#include "tests/support/process.h"

namespace fs = std::filesystem;

namespace kd {
namespace {

// The DT_NEEDED entries of a 64-bit ELF file; empty for a static executable.
std::vector<std::string> needed_libraries(const std::string& elf) {
  std::vector<std::string> out;
  auto at = [&](size_t off, size_t n) {
    if (off + n > elf.size()) throw std::runtime_error("ELF offset out of range");
    return elf.data() + off;
  };
  const auto* eh = reinterpret_cast<const Elf64_Ehdr*>(at(0, sizeof(Elf64_Ehdr)));
  if (std::string(reinterpret_cast<const char*>(eh->e_ident), 4) != ELFMAG ||
      eh->e_ident[EI_CLASS] != ELFCLASS64)
    throw std::runtime_error("not a 64-bit ELF file");
  for (int i = 0; i < eh->e_shnum; ++i) {
    const auto* sh = reinterpret_cast<const Elf64_Shdr*>(
        at(eh->e_shoff + size_t(i) * eh->e_shentsize, sizeof(Elf64_Shdr)));
    if (sh->sh_type != SHT_DYNAMIC) continue;
    const auto* strtab = reinterpret_cast<const Elf64_Shdr*>(
        at(eh->e_shoff + size_t(sh->sh_link) * eh->e_shentsize, sizeof(Elf64_Shdr)));
    for (size_t off = 0; off + sizeof(Elf64_Dyn) <= sh->sh_size; off += sizeof(Elf64_Dyn)) {
      const auto* d =
          reinterpret_cast<const Elf64_Dyn*>(at(sh->sh_offset + off, sizeof(Elf64_Dyn)));
      if (d->d_tag == DT_NULL) break;
      if (d->d_tag == DT_NEEDED) out.emplace_back(at(strtab->sh_offset + d->d_un.d_val, 1));
    }
  }
  return out;
}

TEST(FrontBinary, LinksNoneOfTheOtherCommandsLibraries) {
  std::vector<std::string> libs = needed_libraries(read_file(KD_BINARY));
  for (const auto& lib : libs)
    for (const char* heavy : {"libgit2", "libcurl", "libssh", "libseccomp", "libzstd", "libboost"})
      EXPECT_EQ(lib.find(heavy), std::string::npos) << KD_BINARY << " links " << lib;
  // The full binary is the one that links them; the check above would pass on any file.
  std::vector<std::string> full =
      needed_libraries(read_file(fs::path(KD_BINARY).parent_path() / "kdispatch-full"));
  EXPECT_TRUE(std::any_of(full.begin(), full.end(),
                          [](const std::string& l) { return l.find("libcurl") == 0; }));
}

TEST(FrontBinary, OtherCommandsRunInTheFullBinary) {
  test::TempDir tmp;
  write_file_atomic(tmp / "receipt.json", "{not json");
  test::ProcessResult r = test::run_kdispatch({"receipt", "verify", tmp / "receipt.json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("is not a receipt"), std::string::npos) << r.out;
  r = test::run_kdispatch({"receipt"});  // the usage error comes from the full binary's parser
  EXPECT_EQ(r.exit_code, 64);
  EXPECT_NE(r.err.find("usage: kdispatch receipt verify FILE"), std::string::npos) << r.err;
  r = test::run_kdispatch({"frobnicate"});
  EXPECT_EQ(r.exit_code, 64);
  EXPECT_NE(r.err.find("unknown command \"frobnicate\""), std::string::npos) << r.err;
}

TEST(FrontBinary, AMissingFullBinaryIsNamed) {
  test::TempDir tmp;
  fs::copy_file(KD_BINARY, tmp / "kdispatch");
  fs::permissions(tmp / "kdispatch", fs::perms::owner_exec, fs::perm_options::add);
  test::ProcessResult r = test::run_process({tmp / "kdispatch", "status"});
  EXPECT_EQ(r.exit_code, 70);
  EXPECT_NE(r.err.find("execv(\"" + tmp / "kdispatch-full" + "\"): ENOENT"), std::string::npos)
      << r.err;
  r = test::run_process({tmp / "kdispatch", "help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("kdispatch brief --wiki DIR"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace kd
