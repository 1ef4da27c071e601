// `cmake --install` lays out a tree that runs on its own: its programs find one another, the
// policies and the examples relative to themselves (common/policy_path.h), and nothing they load
// names the tree they were built from. The installed programs run with that tree out of reach.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "examples/example_wiki.h"
#include "tests/cli/elf_file.h"
#include "tests/support/process.h"

namespace fs = std::filesystem;

namespace kd {
namespace {

constexpr fs::perms kReadable = fs::perms::owner_all | fs::perms::group_read |
                                fs::perms::group_exec | fs::perms::others_read |
                                fs::perms::others_exec;

// Run under `unshare --mount` as root: an empty tmpfs over the build and the source tree (build
// first, it may lie inside the sources), then the program, from /.
constexpr const char* kHide =
    "mount -t tmpfs -o size=64k kd-hidden \"$2\" && mount -t tmpfs -o size=64k kd-hidden \"$1\" "
    "&& test ! -e \"$1/CMakeLists.txt\" || { echo 'could not hide the trees' >&2; exit 99; }; "
    "cd / && shift 2 && exec \"$@\"";

// The first string in `bytes` that names `tree` and is not a C++ source file's own path (which a
// sanitizer build keeps for its reports; examples/ holds C++ sources too); "" when there is none.
std::string data_path_named(const std::string& bytes, const std::string& tree) {
  for (size_t at = bytes.find(tree); at != std::string::npos; at = bytes.find(tree, at + 1)) {
    const size_t begin = bytes.rfind('\0', at) + 1;  // npos + 1 == 0
    const std::string text = bytes.substr(begin, bytes.find('\0', at) - begin);
    const bool source_file = text.ends_with(".cc") || text.ends_with(".h");
    if (!source_file) return text;
  }
  return "";
}

class Installed {
 public:
  Installed() {
    fs::permissions(prefix_.path(), kReadable);
    for (const std::string& tree : {source_, build_})
      if ((prefix_.path() + "/").rfind(tree + "/", 0) == 0)
        throw std::runtime_error("the temporary directory " + prefix_.path() + " is inside " +
                                 tree);
    result_ = test::run_process({KD_CMAKE, "--install", build_, "--prefix", prefix_.path()});
  }
  const test::ProcessResult& install_result() const { return result_; }
  std::string path(const std::string& rel) const { return prefix_ / rel; }

  // The installed kdispatch with `args`, no variable pointing at other files, and as root the
  // build and source trees hidden.
  test::ProcessResult kdispatch(const std::vector<std::string>& args) const {
    std::vector<std::string> argv;
    if (::geteuid() == 0)
      argv = {"unshare", "--mount", "--", "/bin/sh", "-c", kHide, "sh", source_, build_};
    argv.push_back(path("bin/kdispatch"));
    argv.insert(argv.end(), args.begin(), args.end());
    return test::run_process(argv, "",
                             {{"KDISPATCH_POLICY_DIR", ""},
                              {"KDISPATCH_EXAMPLES_DIR", ""},
                              {"KDISPATCH_WORKERS_DIR", ""}});
  }
  const std::string& source() const { return source_; }
  const std::string& build() const { return build_; }

 private:
  test::TempDir prefix_;
  std::string source_ = fs::canonical(KD_SOURCE_DIR).string();
  std::string build_ = fs::canonical(KD_BUILD_DIR).string();
  test::ProcessResult result_;
};

TEST(Install, LaysOutProgramsPoliciesAndExamples) {
  Installed in;
  ASSERT_EQ(in.install_result().exit_code, 0) << in.install_result().out << in.install_result().err;
  for (const char* program :
       {"bin/kdispatch", "bin/kdispatch-full", "bin/kdispatch-box",
        "share/kdispatch/examples/tools/kverify", "share/kdispatch/workers/kd-pyworker"})
    EXPECT_EQ(::access(in.path(program).c_str(), X_OK), 0) << program;
  for (const char* file :
       {"share/kdispatch/policies/sandbox/author.json",
        "share/kdispatch/policies/sandbox/verifier.json",
        "share/kdispatch/policies/load-mandate.json", "share/kdispatch/policies/audit.json",
        "share/kdispatch/examples/wiki/wiki/kernel-optimization-index.md",
        "share/kdispatch/examples/home/normkit/README.md",
        "share/kdispatch/examples/scripts/honest-author.json",
        "share/kdispatch/examples/refusal-cases/unknown-chip/case.json"})
    EXPECT_TRUE(fs::is_regular_file(in.path(file))) << file;
  // The example's C++ is the build's, not data.
  EXPECT_FALSE(fs::exists(in.path("share/kdispatch/examples/demo.cc")));
  // Nothing a program loads names the build tree or the source tree's data: no path baked in to
  // fall back to.
  for (const char* program : {"kdispatch", "kdispatch-full", "kdispatch-box"}) {
    const std::string loaded = test::ElfFile(in.path(std::string("bin/") + program)).loaded_bytes();
    EXPECT_GT(loaded.size(), 100000u) << program;
    for (const char* data : {"/policies", "/examples", "/workers"}) {
      const std::string named = in.source() + data;
      EXPECT_EQ(data_path_named(loaded, named), "") << program << " names " << named;
    }
    EXPECT_EQ(data_path_named(loaded, in.build()), "") << program << " names " << in.build();
  }
}

TEST(Install, BriefSandboxAndDemoRunFromTheInstalledTree) {
  Installed in;
  ASSERT_EQ(in.install_result().exit_code, 0) << in.install_result().err;
  test::TempDir work;
  fs::permissions(work.path(), kReadable);

  // The brief reads the installed load mandate and chip inventory.
  examples::materialize_example(work / "wiki");
  test::ProcessResult r = in.kdispatch(
      {"brief", "--wiki", work / "wiki", "--family", "rms-norm", "--experiment", "v002", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("\"experiment\": \"v002\""), std::string::npos) << r.out;

  // The box: the installed author profile, and the box program beside the front. As root a box
  // runs as the worktree's owner, never root.
  fs::create_directory(work / "wt");
  if (::geteuid() == 0) {
    ASSERT_EQ(::chown((work / "wt").c_str(), 65534, 65534), 0);
  }
  r = in.kdispatch({"sandbox", "exec", "--worktree", work / "wt", "--", "/bin/echo", "boxed"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "boxed\n");

  // The demo, through kdispatch-full: the installed examples, scripts and verify tool.
  r = in.kdispatch({"demo", "--run-root", work / "demo"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("rms-norm/v002  honest"), std::string::npos) << r.out;
  // The installed worker ran in the verifier's boxes: the honest run has its receipt.
  EXPECT_NE(r.out.find("honest: " + work / "demo/honest/wiki/raw/profiles/"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("rms-norm/v002  cheating  invalid"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace kd
