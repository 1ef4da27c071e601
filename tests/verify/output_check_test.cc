// The parent's own comparison of outputs (verify/output_check.h): the element rules it applies to
// every answer of every round.
#include "verify/output_check.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace kd::verify {
namespace {

template <typename T>
WireArray array_of(const std::vector<T>& values, const std::string& dtype) {
  WireArray a;
  a.dtype = dtype;
  a.shape = {std::int64_t(values.size())};
  a.bytes.resize(values.size() * sizeof(T));
  std::memcpy(a.bytes.data(), values.data(), a.bytes.size());
  return a;
}

WireArray f32(const std::vector<float>& v) {
  return array_of(v, "<f4");
}

TEST(OutputCheck, AgreesWithinTheToleranceAndNamesTheDifferenceBeyondIt) {
  const std::vector<WireArray> want = {f32({1, 2, 3})};
  OutputStats same = compare_outputs(std::vector<WireArray>{f32({1, 2, 3})}, want, 0);
  EXPECT_TRUE(same.ok) << same.problem;
  EXPECT_EQ(same.max_abs, 0);
  EXPECT_EQ(same.scale, 3);

  OutputStats near = compare_outputs(std::vector<WireArray>{f32({1, 2.25f, 3})}, want, 0.5);
  EXPECT_TRUE(near.ok) << near.problem;
  EXPECT_DOUBLE_EQ(near.max_abs, 0.25);
  EXPECT_DOUBLE_EQ(near.max_rel, 0.125);

  OutputStats far = compare_outputs(std::vector<WireArray>{f32({1, 2.25f, 3})}, want, 0.1);
  EXPECT_FALSE(far.ok);
  EXPECT_NE(far.problem.find("exceeds the tolerance"), std::string::npos) << far.problem;
}

TEST(OutputCheck, ANonFiniteAnswerFailsWhateverTheTolerance) {
  const std::vector<WireArray> want = {f32({1, 2, 3, 4})};
  for (float bad :
       {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    OutputStats s = compare_outputs(std::vector<WireArray>{f32({1, bad, 3, 4})}, want, 1e30);
    EXPECT_FALSE(s.ok);
    EXPECT_DOUBLE_EQ(s.finite_fraction, 0.75);
    EXPECT_NE(s.problem.find("non-finite"), std::string::npos) << s.problem;
  }
}

TEST(OutputCheck, ANaNInTheReferenceAddsNoDifferenceAndAnInfiniteOneFails) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  OutputStats s = output_distance(std::vector<WireArray>{f32({1, 5, 3})},
                                  std::vector<WireArray>{f32({1, nan, 3})});
  ASSERT_TRUE(s.ok) << s.problem;
  EXPECT_EQ(s.max_abs, 0);
  EXPECT_EQ(s.max_rel, 0);

  OutputStats inf = compare_outputs(std::vector<WireArray>{f32({1, 5, 3})},
                                    std::vector<WireArray>{f32({1, INFINITY, 3})}, 1e30);
  EXPECT_FALSE(inf.ok);
  EXPECT_TRUE(std::isinf(inf.max_abs));
}

TEST(OutputCheck, FindsTheWorstElementAcrossChunksAndDtypes) {
  // Longer than the comparison's chunk, the worst element last, a float64 answer to a float32
  // reference, and an integer output beside it.
  std::vector<double> got(10007, 1.0);
  std::vector<float> want(10007, 1.0f);
  got.back() = 1.5;
  got[4096] = 1.25;
  const std::vector<WireArray> answer = {array_of(got, "<f8"),
                                         array_of(std::vector<std::int32_t>{7, -3}, "<i4")};
  const std::vector<WireArray> reference = {f32(want),
                                            array_of(std::vector<std::int64_t>{7, -3}, "<i8")};
  OutputStats s = output_distance(answer, reference);
  ASSERT_TRUE(s.ok) << s.problem;
  EXPECT_DOUBLE_EQ(s.max_abs, 0.5);
  EXPECT_DOUBLE_EQ(s.max_rel, 0.5);
  EXPECT_DOUBLE_EQ(s.scale, 7);
  EXPECT_DOUBLE_EQ(s.finite_fraction, 1.0);
}

TEST(OutputCheck, TheQuickTestOfATimedRoundAgreesOnlyWhenEveryElementIsWithin) {
  const std::vector<WireArray> want = {f32({1, 2, 3})};
  EXPECT_TRUE(agrees_within(std::vector<WireArray>{f32({1, 2.25f, 3})}, want, 0.5));
  EXPECT_FALSE(agrees_within(std::vector<WireArray>{f32({1, 2.25f, 3})}, want, 0.1));
  EXPECT_FALSE(agrees_within(std::vector<WireArray>{f32({1, NAN, 3})}, want, 1e30));
  EXPECT_FALSE(agrees_within(std::vector<WireArray>{f32({1, INFINITY, 3})}, want, 1e30));
  // Another dtype is left to compare_outputs, which widens both sides.
  const std::vector<WireArray> wide = {array_of(std::vector<double>{1, 2, 3}, "<f8")};
  EXPECT_FALSE(agrees_within(wide, want, 1));
  EXPECT_TRUE(compare_outputs(wide, want, 1).ok);
  EXPECT_TRUE(agrees_within(wide, wide, 0));
}

TEST(OutputCheck, NamesAShapeOrCountOrDtypeItCannotCompare) {
  const std::vector<WireArray> want = {f32({1, 2, 3})};
  WireArray other = f32({1, 2, 3});
  other.shape = {3, 1};
  OutputStats shape = output_distance(std::vector<WireArray>{other}, want);
  EXPECT_FALSE(shape.ok);
  EXPECT_EQ(shape.problem, "output 0 has shape (3, 1), the reference's (3)");

  OutputStats count = output_distance(std::vector<WireArray>{}, want);
  EXPECT_FALSE(count.ok);
  EXPECT_EQ(count.problem, "0 outputs where the reference has 1");

  WireArray complex = f32({1, 2, 3});
  complex.dtype = "<c8";
  complex.shape = {3};
  OutputStats dtype = output_distance(std::vector<WireArray>{complex}, want);
  EXPECT_FALSE(dtype.ok);
  EXPECT_NE(dtype.problem.find("\"<c8\""), std::string::npos) << dtype.problem;
}

}  // namespace
}  // namespace kd::verify
