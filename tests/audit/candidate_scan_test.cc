#include "audit/candidate_scan.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "common/files.h"

namespace kd::audit {
namespace {

std::vector<std::string> rules_of(const std::string& src) {
  std::vector<std::string> out;
  for (const auto& f : scan_candidate(src, "cand.py"))
    out.push_back(f.rule);
  return out;
}

bool has(const std::vector<std::string>& v, const std::string& r) {
  return std::find(v.begin(), v.end(), r) != v.end();
}

TEST(CandidateScan, HonestKernelIsClean) {
  EXPECT_TRUE(scan_candidate(read_file(std::filesystem::path(KD_SOURCE_DIR) /
                                       "tests/verify/exploits/honest_control.py"),
                             "honest_control.py")
                  .empty());
  // Words in docstrings and comments are not code.
  EXPECT_TRUE(rules_of("\"\"\"No threading here; sys.modules untouched.\"\"\"\n"
                       "# time.perf_counter = nothing\nimport numpy as np\n"
                       "if __name__ == \"__main__\":\n    pass\n")
                  .empty());
}

TEST(CandidateScan, EachTrickIsAFindingOnItsLine) {
  auto f = scan_candidate("import numpy as np\ntime.perf_counter_ns = lambda: 0\n", "c.py");
  // A timer is also another module's attribute: both rules, both on line 2.
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].line, 2);
  EXPECT_EQ(f[0].rule, "timer_patch");
  EXPECT_EQ(f[1].line, 2);
  EXPECT_EQ(f[1].rule, "module_write");
  EXPECT_TRUE(has(rules_of("np.mean = slow\n"), "module_write"));
  EXPECT_TRUE(has(rules_of("m = sys.modules['__main__']\n"), "module_write"));
  EXPECT_TRUE(has(rules_of("f = sys._getframe(1)\n"), "frame_access"));
  EXPECT_TRUE(has(rules_of("v = frame.f_locals.get('oracle')\n"), "frame_access"));
  EXPECT_TRUE(has(rules_of("import threading\n"), "concurrency"));
  EXPECT_TRUE(has(rules_of("with open(path, 'w') as f:\n"), "file_write"));
  EXPECT_TRUE(has(rules_of("k = os.environ['KEY']\n"), "environment"));
  EXPECT_TRUE(has(rules_of("import socket\n"), "network"));
  EXPECT_TRUE(has(rules_of("import ctypes\n"), "native_access"));
  // Reading a file is not a write.
  EXPECT_TRUE(rules_of("with open(path) as f:\n    f.read()\n").empty());
}

// Every exploit of the suite that works from inside the candidate's process says so in its code.
TEST(CandidateScan, InProcessExploitsAreFound) {
  for (const char* name : {"forged_receipt", "timer_patch", "main_measure_patch", "stack_oracle",
                           "slow_the_baseline", "reseal_thread", "busy_neighbour"}) {
    const auto path = std::filesystem::path(KD_SOURCE_DIR) / "tests/verify/exploits" /
                      (std::string(name) + ".py");
    EXPECT_FALSE(scan_candidate(read_file(path), name).empty()) << name;
  }
}

}  // namespace
}  // namespace kd::audit
