// `kdispatch` is a lean front that runs help, brief, sandbox exec, receipt verify and transcript
// verify itself and execs kdispatch-full for every other command: it must not link what only the
// other commands need (libcurl, libgit2, Boost, the agents), its light commands must work with
// no full binary beside it, and a missing full binary is an error that names it.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "common/files.h"
#include "tests/cli/elf_file.h"
#include "tests/support/process.h"

namespace fs = std::filesystem;

namespace kd {
namespace {

const fs::path kBin = fs::path(KD_BINARY).parent_path();

bool has_symbol(const std::vector<std::string>& symbols, const std::string& part) {
  return std::any_of(symbols.begin(), symbols.end(),
                     [&](const std::string& s) { return s.find(part) != std::string::npos; });
}

TEST(FrontBinary, LinksNoneOfTheOtherCommandsLibraries) {
  const test::ElfFile front(KD_BINARY);
  // Dynamically linked (a sanitizer build), it needs none of their shared libraries...
  for (const auto& lib : front.needed_libraries())
    for (const char* heavy : {"libgit2", "libcurl", "libssh", "libzstd", "libboost"})
      EXPECT_EQ(lib.find(heavy), std::string::npos) << KD_BINARY << " links " << lib;
  // ...and, static or not, none of their code is in it, nor the heavy commands' runners.
  const std::vector<std::string> symbols = front.symbols();
  ASSERT_FALSE(symbols.empty()) << KD_BINARY << " has no symbol table to check";
  for (const char* heavy :
       {"curl_easy_perform", "git_repository_open", "git_libgit2_init", "5boost4asio", "8simdjson",
        "ZSTD_decompressStream", "cmd_author", "cmd_verify", "cmd_run", "cmd_status", "cmd_audit",
        "cmd_fake_llm", "cmd_demo"})
    EXPECT_FALSE(has_symbol(symbols, heavy)) << KD_BINARY << " holds " << heavy;
  for (const char* light : {"cmd_brief", "cmd_sandbox", "cmd_receipt", "cmd_transcript"})
    EXPECT_TRUE(has_symbol(symbols, light)) << KD_BINARY << " lacks " << light;
  // The full binary is the one that links them; the checks above would pass on an empty file.
  const test::ElfFile full((kBin / "kdispatch-full").string());
  const std::vector<std::string> full_libs = full.needed_libraries();
  EXPECT_TRUE(std::any_of(full_libs.begin(), full_libs.end(),
                          [](const std::string& l) { return l.rfind("libcurl", 0) == 0; }));
  EXPECT_TRUE(has_symbol(full.symbols(), "cmd_author"));
}

// Where the build links them statically, the front and the box program load no shared library
// at all: no dynamic loader on a brief's or a box's start.
TEST(FrontBinary, IsStaticWhereTheBuildLinksItSo) {
  for (const auto& [program, is_static] :
       {std::pair{"kdispatch", bool(KD_FRONT_STATIC)}, {"kdispatch-box", bool(KD_BOX_STATIC)}}) {
    const std::vector<std::string> libs =
        test::ElfFile((kBin / program).string()).needed_libraries();
    if (is_static)
      EXPECT_TRUE(libs.empty()) << program << " needs " << libs.front();
    else
      EXPECT_FALSE(libs.empty()) << program << " is static in a build that links it dynamically";
  }
}

TEST(FrontBinary, OtherCommandsRunInTheFullBinary) {
  // The usage error comes from the full binary's parser, through the front.
  test::ProcessResult r = test::run_kdispatch({"status", "--bogus"});
  EXPECT_EQ(r.exit_code, 64);
  EXPECT_NE(r.err.find("kdispatch status: unknown option --bogus"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("usage: kdispatch status [--run-root DIR]"), std::string::npos) << r.err;
  r = test::run_kdispatch({"frobnicate"});
  EXPECT_EQ(r.exit_code, 64);
  EXPECT_NE(r.err.find("unknown command \"frobnicate\""), std::string::npos) << r.err;
  // kdispatch-full is the whole command line on its own, with the same table.
  r = test::run_process({(kBin / "kdispatch-full").string(), "receipt"});
  EXPECT_EQ(r.exit_code, 64);
  EXPECT_NE(r.err.find("usage: kdispatch receipt verify FILE"), std::string::npos) << r.err;
  EXPECT_EQ(test::run_process({(kBin / "kdispatch-full").string(), "help"}).out,
            test::run_kdispatch({"help"}).out);
}

// The front alone, with its box program and policies as an installation lays them out but no
// kdispatch-full: the light commands run, the others name the full binary they miss.
TEST(FrontBinary, LightCommandsNeedNoFullBinary) {
  test::TempDir tmp;
  fs::permissions(tmp.path(), fs::perms::others_read | fs::perms::others_exec,
                  fs::perm_options::add);
  fs::create_directories(tmp / "bin");
  fs::create_directories(tmp / "share/kdispatch");
  for (const char* program : {"kdispatch", "kdispatch-box"})
    fs::copy_file(kBin / program, tmp / "bin/" + program);
  fs::create_directory_symlink(fs::path(KD_SOURCE_DIR) / "policies",
                               tmp / "share/kdispatch/policies");
  const std::string front = tmp / "bin/kdispatch";
  const std::map<std::string, std::string> env = {{"KDISPATCH_POLICY_DIR", ""}};

  write_file_atomic(tmp / "receipt.json", "{not json");
  test::ProcessResult r = test::run_process({front, "receipt", "verify", tmp / "receipt.json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("is not a receipt"), std::string::npos) << r.out << r.err;
  r = test::run_process({front, "receipt"});
  EXPECT_EQ(r.exit_code, 64);
  EXPECT_NE(r.err.find("usage: kdispatch receipt verify FILE"), std::string::npos) << r.err;

  write_file_atomic(tmp / "transcript.jsonl", "{\"seq\": 0}\n");
  r = test::run_process({front, "transcript", "verify", tmp / "transcript.jsonl"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out.rfind("BROKEN " + tmp / "transcript.jsonl" + " line 1: ", 0), 0u) << r.out;

  r = test::run_process(
      {front, "brief", "--wiki", tmp / "no-wiki", "--family", "rms-norm", "--experiment", "v002"},
      "", env);
  EXPECT_NE(r.exit_code, 70) << r.err;
  EXPECT_EQ(r.err.find("kdispatch-full"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("no-wiki"), std::string::npos) << r.out << r.err;

  // As root a box runs as the worktree's owner, never root.
  fs::create_directory(tmp / "wt");
  if (::geteuid() == 0) {
    ASSERT_EQ(::chown((tmp / "wt").c_str(), 65534, 65534), 0);
  }
  r = test::run_process(
      {front, "sandbox", "exec", "--worktree", tmp / "wt", "--", "/bin/echo", "inside"}, "", env);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "inside\n");

  r = test::run_process({front, "status"});
  EXPECT_EQ(r.exit_code, 70);
  EXPECT_NE(r.err.find("kdispatch status: execv(\"" + tmp / "bin/kdispatch-full" + "\"): ENOENT"),
            std::string::npos)
      << r.err;
  r = test::run_process({front, "help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("kdispatch brief --wiki DIR"), std::string::npos) << r.out;
}

// Without an installation around it, a light command that needs a policy names where it
// looked and the variable that would point elsewhere.
TEST(FrontBinary, AMissingInstallationIsNamed) {
  test::TempDir tmp;
  fs::copy_file(KD_BINARY, tmp / "kdispatch");
  fs::create_directory(tmp / "wt");
  test::ProcessResult r = test::run_process(
      {tmp / "kdispatch", "sandbox", "exec", "--worktree", tmp / "wt", "--", "/bin/true"}, "",
      {{"KDISPATCH_POLICY_DIR", ""}});
  EXPECT_EQ(r.exit_code, 2);
  const std::string parent = fs::path(tmp.path()).parent_path().string();
  EXPECT_NE(r.err.find("the policies of \"" + tmp / "kdispatch" + "\": neither \"" + parent +
                       "/share/kdispatch\" nor"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("KDISPATCH_POLICY_DIR names another folder"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace kd
