// Receipt validation against receipts that /usr/bin/python3's json module writes, as kgate does.
#include "contract/receipt.h"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/files.h"
#include "common/sha256.h"
#include "tests/support/fixtures.h"
#include "tests/support/process.h"

namespace kd::contract {
namespace {

std::string python_receipt(const test::TempDir& dir, const std::string& name,
                           const std::string& dict, const std::string& mutate = "") {
  return test::python_receipt(dir / name, dict, mutate);
}

const std::string kVerify =
    "{'cmd':'verify','verdict':'PASS','mode':'full','gates':{'parity':True,'coverage':True,'"
    "measure':True},"
    "'speedup':1.25,'p50_ms':{'baseline':2.5,'candidate':2.0},'parity_verdict':'PASS',"
    "'measure_verdict':'PASS','hlo_audit':{'status':'fired','custom_call_count':3,'checks':[]},"
    "'reproduction':'kgate verify --mode full','artifact_dir':'raw/profiles/t/rms-v001/verifier',"
    "'anomalies':[],'kgate_version':'0.2','timestamp':'2026-03-02T10:00:00Z'}";

bool has_problem(const ReceiptCheck& r, const std::string& needle) {
  for (const auto& p : r.problems)
    if (p.find(needle) != std::string::npos) return true;
  return false;
}

TEST(Receipt, IntactPythonVerifyReceiptValidatesWithItsFields) {
  test::TempDir dir;
  ReceiptCheck r = validate_receipt(python_receipt(dir, "r.json", kVerify));
  ASSERT_TRUE(r.ok) << (r.problems.empty() ? "" : r.problems[0]);
  EXPECT_EQ(r.cmd, "verify");
  EXPECT_EQ(r.verdict, "PASS");
  EXPECT_EQ(r.mode, "full");
  EXPECT_EQ(r.gates.size(), 3u);
  EXPECT_DOUBLE_EQ(*r.speedup, 1.25);
  EXPECT_DOUBLE_EQ(*r.p50_baseline_ms, 2.5);
  EXPECT_DOUBLE_EQ(*r.p50_candidate_ms, 2.0);
  EXPECT_EQ(r.hlo_status, "fired");
  EXPECT_EQ(*r.custom_call_count, 3);
  EXPECT_EQ(r.self_sha256.size(), 64u);
  EXPECT_EQ(r.file_sha256, sha256_file_hex(dir / "r.json"));
}

TEST(Receipt, TrickyValuesStayByteCompatible) {
  test::TempDir dir;
  std::string tricky =
      "{'cmd':'measure','verdict':'FAIL','floor':1e-05,'big':1e+16,'sum':0.1+0.2,'negzero':-0.0,"
      "'huge':123456789012345678901234567890,'nan':nan,'inf':inf,'ninf':-inf,"
      "'unicode_ключ':'значение ✓ "
      "😀','nested':{'z':[1,{'b':2,'a':[None,True,False]}],'a':'\\x01\\x7f'},"
      "'argv':['kgate','measure','--flag=\"x\"\\\\y'],'p50_ms':{'baseline':3.0,'candidate':1.5},'"
      "speedup':2.0}";
  ReceiptCheck r = validate_receipt(python_receipt(dir, "r.json", tricky));
  EXPECT_TRUE(r.ok) << (r.problems.empty() ? "" : r.problems[0]);
  EXPECT_EQ(r.verdict, "FAIL");  // a FAIL receipt is still intact
}

TEST(Receipt, EditedVerdictIsDetected) {
  test::TempDir dir;
  ReceiptCheck r =
      validate_receipt(python_receipt(dir, "r.json", kVerify, "obj['verdict']='PASS '"));
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(has_problem(r, "does not match")) << r.problems.size();
}

TEST(Receipt, EditedNumberTokenIsDetected) {
  test::TempDir dir;
  std::string path = python_receipt(dir, "r.json", kVerify);
  std::string text = read_file(path);
  auto at = text.find("2.5");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 3, "2.50");  // same value, different bytes: Python would still hash 2.5
  write_file_atomic(path, text);
  EXPECT_TRUE(validate_receipt(path).ok);
  text.replace(at, 4, "2.6");
  write_file_atomic(path, text);
  EXPECT_FALSE(validate_receipt(path).ok);
}

TEST(Receipt, ResealedForgeriesMustStillBeConsistent) {
  test::TempDir dir;
  std::string false_gate = kVerify;
  false_gate.replace(false_gate.find("'coverage':True"), 15, "'coverage':False");
  ReceiptCheck a = validate_receipt(python_receipt(dir, "a.json", false_gate));
  EXPECT_FALSE(a.ok);
  EXPECT_TRUE(has_problem(a, "gate \"coverage\" false"));

  std::string speed = kVerify;
  speed.replace(speed.find("'speedup':1.25"), 14, "'speedup':1.40");
  ReceiptCheck b = validate_receipt(python_receipt(dir, "b.json", speed));
  EXPECT_FALSE(b.ok);
  EXPECT_TRUE(has_problem(b, "speedup 1.4 is not"));

  std::string close = kVerify;
  close.replace(close.find("'speedup':1.25"), 14, "'speedup':1.2500001");
  EXPECT_TRUE(validate_receipt(python_receipt(dir, "c.json", close)).ok);
}

TEST(Receipt, MissingVerifyFieldsAndBadCmdAreNamed) {
  test::TempDir dir;
  ReceiptCheck r =
      validate_receipt(python_receipt(dir, "r.json", "{'cmd':'verify','verdict':'PASS'}"));
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(has_problem(r, "verify receipt has no hlo_audit"));
  EXPECT_TRUE(has_problem(r, "verify receipt has no anomalies"));
  ReceiptCheck c =
      validate_receipt(python_receipt(dir, "c.json", "{'cmd':'bench','verdict':'PASS'}"));
  EXPECT_TRUE(has_problem(c, "cmd \"bench\""));
}

TEST(Receipt, TruncatedMissingAndNonReceiptsFail) {
  test::TempDir dir;
  std::string path = python_receipt(dir, "r.json", kVerify);
  std::string text = read_file(path);
  write_file_atomic(path, text.substr(0, text.size() / 2));
  ReceiptCheck t = validate_receipt(path);
  EXPECT_FALSE(t.ok);
  EXPECT_TRUE(has_problem(t, "truncated"));
  EXPECT_FALSE(validate_receipt(dir / "absent.json").ok);
  write_file_atomic(dir / "list.json", "[1,2]");
  EXPECT_TRUE(has_problem(validate_receipt(dir / "list.json"), "not a JSON object"));
  write_file_atomic(dir / "nohash.json", "{\"cmd\":\"parity\",\"verdict\":\"PASS\"}");
  EXPECT_TRUE(has_problem(validate_receipt(dir / "nohash.json"), "no self_sha256"));
}

// What a verify command could leave instead of a receipt: a FIFO (a plain read hangs), a link to
// /dev/zero (a plain read never ends) or to a host file (its hash would land in the journal).
// Each is an invalid receipt named as such, at once; nothing is followed or hashed.
TEST(Receipt, FifosAndLinksAreInvalidNotWaitedOnOrFollowed) {
  test::TempDir dir;
  ASSERT_EQ(::mkfifo((dir / "fifo.json").c_str(), 0644), 0);
  std::filesystem::create_symlink("/dev/zero", dir / "zero.json");
  std::filesystem::create_symlink("/etc/passwd", dir / "host.json");
  const auto start = std::chrono::steady_clock::now();
  ReceiptCheck fifo = validate_receipt(dir / "fifo.json");
  ReceiptCheck zero = validate_receipt(dir / "zero.json");
  ReceiptCheck host = validate_receipt(dir / "host.json");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_TRUE(has_problem(fifo, "is a FIFO, not a regular file")) << fifo.problems.front();
  for (const ReceiptCheck* r : {&zero, &host}) {
    EXPECT_FALSE(r->ok);
    EXPECT_TRUE(has_problem(*r, "is a symbolic link, not a regular file"));
    EXPECT_EQ(r->file_sha256, "");
  }
  auto cli = test::run_kdispatch({"receipt", "verify", dir / "fifo.json"});
  EXPECT_EQ(cli.exit_code, 2);
  EXPECT_NE((cli.out + cli.err).find("FIFO"), std::string::npos) << cli.out << cli.err;
}

TEST(ReceiptCli, ExitZeroForIntactTwoOtherwise) {
  test::TempDir dir;
  std::string good = python_receipt(dir, "good.json", kVerify);
  auto ok = test::run_kdispatch({"receipt", "verify", good});
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  EXPECT_NE(ok.out.find("OK"), std::string::npos);
  EXPECT_NE(ok.out.find("verdict=PASS"), std::string::npos);

  std::string bad = python_receipt(dir, "bad.json", kVerify, "obj['speedup']=9.0");
  auto no = test::run_kdispatch({"receipt", "verify", bad});
  EXPECT_EQ(no.exit_code, 2);
  EXPECT_NE(no.out.find("does not match"), std::string::npos) << no.out;

  EXPECT_EQ(test::run_kdispatch({"receipt", "verify"}).exit_code, 64);
  EXPECT_EQ(test::run_kdispatch({"receipt", "check", good}).exit_code, 64);
}

}  // namespace
}  // namespace kd::contract
