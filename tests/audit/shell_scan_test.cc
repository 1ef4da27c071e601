#include "audit/shell_scan.h"

#include <gtest/gtest.h>

#include <vector>

namespace kd::audit {
namespace {

std::vector<std::string> scan(const std::string& cmd, const std::string& cwd = "/w") {
  std::vector<std::string> out;
  scan_shell(cmd, cwd, [&](Event e) {
    out.push_back(std::string(e.kind == EventKind::FileRead    ? "R "
                              : e.kind == EventKind::FileWrite ? "W "
                                                               : "C ") +
                  (e.kind == EventKind::Commit ? e.text : e.path));
  });
  return out;
}

using V = std::vector<std::string>;

TEST(ShellScan, RedirectionsAndTee) {
  EXPECT_EQ(scan("echo hi > out.txt"), V({"W /w/out.txt"}));
  EXPECT_EQ(scan("make 2>>log/err.txt 1>/dev/null"), V({"W /w/log/err.txt"}));
  EXPECT_EQ(scan("python gen.py | tee -a ../up.txt"), V({"W /up.txt"}));
  EXPECT_EQ(scan("sort < in.txt > sorted.txt"), V({"R /w/in.txt", "W /w/sorted.txt"}));
  EXPECT_EQ(scan("ls 2>&1 | cat"), V({}));
}

TEST(ShellScan, EditorsCopiesAndReads) {
  EXPECT_EQ(scan("sed -i 's/a/b/' k.py"), V({"W /w/k.py"}));
  EXPECT_EQ(scan("sed -n 1,80p ref.py"), V({"R /w/ref.py"}));
  EXPECT_EQ(scan("cp a.py /tmp/b.py"), V({"R /w/a.py", "W /tmp/b.py"}));
  EXPECT_EQ(scan("mv a b/"), V({"W /w/a", "W /w/b"}));
  EXPECT_EQ(scan("head -n 20 x.py y.py"), V({"R /w/x.py", "R /w/y.py"}));
  EXPECT_EQ(scan("grep -rn pattern src"), V({"R /w/src"}));
  EXPECT_EQ(scan("rm -rf build"), V({"W /w/build"}));
}

TEST(ShellScan, CdWrappersQuotesAndHeredocs) {
  EXPECT_EQ(scan("cd sub && touch 'a b.txt'; cd .. ; touch c"), V({"W /w/sub/a b.txt", "W /w/c"}));
  EXPECT_EQ(scan("bash -lc \"cat ../secret/answer.py\""), V({"R /secret/answer.py"}));
  EXPECT_EQ(scan("FOO=1 timeout 10 cat x"), V({"R /w/x"}));
  EXPECT_EQ(scan("cat > k.py <<'EOF'\nrm -rf /\necho > /etc/passwd\nEOF\ncat k.py"),
            V({"W /w/k.py", "R /w/k.py"}));
}

TEST(ShellScan, GitCommitMessages) {
  EXPECT_EQ(scan("git add -A && git commit -m 'cand1(x v001): a — b' -m 'exp: v001'"),
            V({"C cand1(x v001): a — b\n\nexp: v001"}));
  EXPECT_EQ(scan("git -C repo commit --message=\"wip\""), V({"C wip"}));
  EXPECT_EQ(scan("git commit"), V({}));  // message from an editor: unknown, not invented
}

TEST(ShellScan, ApplyPatchHeaders) {
  std::vector<std::string> out;
  scan_apply_patch(
      "*** Begin Patch\n*** Add File: a.py\n+x\n*** Update File: ../b.py\n*** Move to: c.py\n"
      "*** Delete File: /abs/d.py\n*** End Patch\n",
      "/w", [&](Event e) { out.push_back(e.path); });
  EXPECT_EQ(out, V({"/w/a.py", "/b.py", "/w/c.py", "/abs/d.py"}));
}

TEST(ShellScan, ResolvePath) {
  EXPECT_EQ(resolve_path("/w/k", "../x/./y"), "/w/x/y");
  EXPECT_EQ(resolve_path("/w", "/abs/p/"), "/abs/p");
  EXPECT_EQ(resolve_path("", "rel"), "rel");
  // Found by fuzz_shell_scan: a run of slashes is the root, normalized like any other path.
  EXPECT_EQ(resolve_path("/w", "/////"), "/");
  EXPECT_EQ(resolve_path("", "///"), "/");
  EXPECT_EQ(scan("cat < ////// > ///"), V({"R /", "W /"}));
}

}  // namespace
}  // namespace kd::audit
