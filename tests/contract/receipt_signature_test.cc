#include "contract/receipt_signature.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <filesystem>
#include <thread>
#include <vector>

#include "common/errors.h"
#include "common/files.h"
#include "contract/receipt.h"
#include "tests/support/process.h"

namespace kd::contract {
namespace {

// RFC 4231 test case 2.
TEST(ReceiptSignature, HmacMatchesTheRfcVector) {
  EXPECT_EQ(hmac_sha256_hex("Jefe", "what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  // Test case 6: a key longer than the block is hashed first.
  EXPECT_EQ(hmac_sha256_hex(std::string(131, '\xaa'),
                            "Test Using Larger Than Block-Size Key - Hash Key First"),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

const char* kReceipt =
    R"({"cmd":"verify","mode":"full","verdict":"PASS","speedup":2.0,)"
    R"("p50_ms":{"baseline":2.0,"candidate":1.0},"parity_verdict":"PASS",)"
    R"("measure_verdict":"PASS","gates":{"parity":true,"measure":true,"firing":true},)"
    R"("hlo_audit":{"status":"FIRED","custom_call_count":1,"checks":{}},"anomalies":[],)"
    R"("reproduction":{"status":"NO_CLAIM"},"artifact_dir":"."})";

TEST(ReceiptSignature, SignedReceiptValidatesAndVerifiesOnlyUnderItsKey) {
  const std::string key(32, 'k');
  const std::string text = sign_and_seal_receipt(kReceipt, key);
  // Still a kgate receipt to every reader that knows nothing of signatures.
  ReceiptCheck c = validate_receipt_text(text, "signed");
  EXPECT_TRUE(c.ok) << (c.problems.empty() ? "" : c.problems[0]);
  SignatureCheck s = check_receipt_signature(text, key);
  EXPECT_TRUE(s.present);
  EXPECT_TRUE(s.ok) << s.problem;
  EXPECT_FALSE(check_receipt_signature(text, std::string(32, 'x')).ok);
  // Unsigned: sealed only.
  const std::string sealed = sign_and_seal_receipt(kReceipt, "");
  EXPECT_TRUE(validate_receipt_text(sealed, "sealed").ok);
  EXPECT_FALSE(check_receipt_signature(sealed, key).present);
}

TEST(ReceiptSignature, KeyIsMadeOncePrivateAndReused) {
  test::TempDir dir;
  const auto path = signing_key_path(dir.path());
  const std::string a = load_or_create_signing_key(path);
  EXPECT_EQ(a.size(), 32u);
  EXPECT_EQ(load_or_create_signing_key(path), a);
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat(path.parent_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  write_file_atomic(path, "short");
  EXPECT_THROW(load_signing_key(path), kd::Error);
}

// Verifications of one campaign start at once and each loads the run root's key: the first to
// make it wins, every one of them gets that key, and none fails or leaves a temporary file.
TEST(ReceiptSignature, KeyMadeByManyAtOnceIsOneKey) {
  for (int round = 0; round < 50; ++round) {
    test::TempDir dir;
    const auto path = signing_key_path(dir.path());
    std::vector<std::string> keys(8);
    std::vector<std::string> errors(keys.size());
    std::vector<std::thread> threads;
    for (size_t i = 0; i < keys.size(); ++i)
      threads.emplace_back([&, i] {
        try {
          keys[i] = load_or_create_signing_key(path);
        } catch (const kd::Error& e) {
          errors[i] = e.what();
        }
      });
    for (auto& t : threads)
      t.join();
    for (size_t i = 0; i < keys.size(); ++i) {
      ASSERT_EQ(errors[i], "") << "round " << round;
      ASSERT_EQ(keys[i], *load_signing_key(path)) << "round " << round << ", caller " << i;
    }
    size_t files = 0;
    for (const auto& e : std::filesystem::directory_iterator(path.parent_path()))
      files += e.is_regular_file();
    ASSERT_EQ(files, 1u) << "round " << round;
  }
}

}  // namespace
}  // namespace kd::contract
