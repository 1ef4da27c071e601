// The verifier's chip order: never the author's chip when another of its kind exists, spread from
// the author's chip, chips that authors are using last.
#include <gtest/gtest.h>

#include "common/errors.h"
#include "dispatcher/verify_run.h"

namespace kd::dispatcher {
namespace {

contract::ChipInventory inventory() {
  contract::ChipInventory inv;
  for (const char* id : {"0", "1", "2", "3"})
    inv.chips.push_back(contract::Chip{id, "cpu", std::string("/locks/") + id, {}, {}});
  inv.chips.push_back(contract::Chip{"t0", "tpu", "/locks/t0", {}, {"/dev/accel0"}});
  inv.source = "chips.json";
  return inv;
}

std::vector<std::string> ids(const std::vector<contract::Chip>& chips) {
  std::vector<std::string> out;
  for (const auto& c : chips)
    out.push_back(c.id);
  return out;
}

TEST(VerifierChips, StartAfterTheAuthorsChipAndKeepItsKind) {
  EXPECT_EQ(ids(verifier_chips(inventory(), "1", std::nullopt, {})),
            (std::vector<std::string>{"2", "3", "0"}));
  EXPECT_EQ(ids(verifier_chips(inventory(), "3", std::nullopt, {})),
            (std::vector<std::string>{"0", "1", "2"}));
  // The only chip of its kind: the verifier shares the author's.
  EXPECT_EQ(ids(verifier_chips(inventory(), "t0", std::nullopt, {})),
            (std::vector<std::string>{"t0"}));
}

TEST(VerifierChips, ChipsAuthorsUseGoLast) {
  EXPECT_EQ(ids(verifier_chips(inventory(), "1", std::nullopt, {"2", "1"})),
            (std::vector<std::string>{"3", "0", "2"}));
}

TEST(VerifierChips, ARequestedChipIsTheOnlyCandidate) {
  EXPECT_EQ(ids(verifier_chips(inventory(), "1", std::string("0"), {"0"})),
            (std::vector<std::string>{"0"}));
  EXPECT_THROW(verifier_chips(inventory(), "1", std::string("9"), {}), Error);
}

}  // namespace
}  // namespace kd::dispatcher
