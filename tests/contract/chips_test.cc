#include "contract/chips.h"

#include <gtest/gtest.h>

#include "common/errors.h"
#include "common/policy_path.h"

namespace kd::contract {
namespace {

std::string error_of(const std::string& json) {
  try {
    parse_chip_inventory(json, "chips.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "accepted";
}

TEST(Chips, ParsesFieldsAndDefaultsTheLockPath) {
  auto inv = parse_chip_inventory(
      R"({"chips":[{"id":"0","kind":"cpu","env":{"A":"1"},"devices":["/dev/null"]},{"id":"7"}]})",
      "chips.json");
  ASSERT_EQ(inv.chips.size(), 2u);
  EXPECT_EQ(inv.chips[0].kind, "cpu");
  EXPECT_EQ(inv.chips[0].lock, "/tmp/tpu-chip-0.lock");
  EXPECT_EQ(inv.chips[0].env.at("A"), "1");
  EXPECT_EQ(inv.chips[1].kind, "tpu");
  EXPECT_EQ(inv.find("7")->lock, "/tmp/tpu-chip-7.lock");
  EXPECT_EQ(inv.find("8"), nullptr);
  EXPECT_EQ(inv.ids(), (std::vector<std::string>{"0", "7"}));
}

TEST(Chips, BadInventoriesAreRefusedNamingChipAndField) {
  EXPECT_EQ(error_of("[]"), "chips.json: expected an object with a \"chips\" array");
  EXPECT_EQ(error_of(R"({"chips":[{"kind":"tpu"}]})"),
            "chips.json: chips[0]: \"id\" must be a non-empty string");
  EXPECT_EQ(error_of(R"({"chips":[{"id":"1","kind":"fpga"}]})"),
            "chips.json: chips[0] (id \"1\"): kind \"fpga\" is not tpu, gpu or cpu");
  EXPECT_EQ(error_of(R"({"chips":[{"id":"1"},{"id":"1"}]})"),
            "chips.json: chips[1] (id \"1\"): duplicate id");
  EXPECT_EQ(error_of(R"({"chips":[{"id":"1","devices":["accel0"]}]})"),
            "chips.json: chips[0] (id \"1\"): devices[0] must be an absolute path");
  EXPECT_EQ(error_of(R"({"chips":[{"id":"1","lock":"/l"},{"id":"2","lock":"/l"}]})"),
            "chips.json: chips[1] (id \"2\"): lock file shared with another chip");
  EXPECT_EQ(error_of(R"({"chips":[{"id":"1","colour":"red"}]})"),
            "chips.json: chips[0]: unknown field \"colour\"");
  EXPECT_NE(error_of("{"), "accepted");
}

TEST(Chips, WrongTypesAreNamedErrors) {
  EXPECT_EQ(error_of(R"({"chips":[{"id":"1","kind":3}]})"),
            "chips.json: chips[0] (id \"1\"): \"kind\" must be a non-empty string");
  EXPECT_EQ(error_of(R"({"chips":[{"id":"1","lock":7}]})"),
            "chips.json: chips[0] (id \"1\"): \"lock\" must be an absolute path");
  EXPECT_EQ(error_of(R"({"chips":[{"id":"1","env":{"A":1}}]})"),
            "chips.json: chips[0] (id \"1\"): \"env.A\" must be a string");
  EXPECT_EQ(error_of(R"({"chips":[{"id":"1","devices":"/dev/a"}]})"),
            "chips.json: chips[0] (id \"1\"): \"devices\" must be an array of strings");
  EXPECT_EQ(error_of(R"({"chips":[7]})"), "chips.json: chips[0]: must be an object");
  EXPECT_EQ(error_of(R"({"chips":[],"spare":[]})"), "chips.json: unknown field \"spare\"");
  EXPECT_EQ(error_of("{").rfind("chips.json: not JSON: ", 0), 0u) << error_of("{");
}

TEST(Chips, SlurmFormNeedsFourFieldsAndDefaultsTheRest) {
  auto inv = parse_chip_inventory(
      R"({"scheduler":"slurm","partition":"tpu","gres":"gpu:tpu:1","chip_env":"TPU_VISIBLE_DEVICES"})",
      "chips.json");
  ASSERT_TRUE(inv.slurm.has_value());
  EXPECT_TRUE(inv.chips.empty());
  EXPECT_EQ(inv.slurm->partition, "tpu");
  EXPECT_EQ(inv.slurm->gres_name, "gpu:tpu");
  EXPECT_EQ(inv.slurm->chip_env, "TPU_VISIBLE_DEVICES");
  EXPECT_EQ(inv.slurm->kind, "tpu");
  EXPECT_EQ(inv.slurm->poll_interval_s, 5);
  EXPECT_FALSE(inv.slurm->time_limit_minutes.has_value());
  EXPECT_EQ(inv.slurm->job_dir, "slurm-jobs");
  EXPECT_TRUE(inv.slurm->kdispatch.empty());
  EXPECT_EQ(inv.slurm->parallel, 0);
  EXPECT_EQ(inv.slurm_chip().id, "slurm:tpu");
  EXPECT_EQ(inv.slurm_chip().kind, "tpu");

  auto full = parse_chip_inventory(
      R"({"scheduler":"slurm","partition":"p","gres":"tpu:1","chip_env":"KD_CHIP","kind":"cpu",
          "devices":["/dev/accel{index}"],"poll_interval_s":0.2,"time_limit_minutes":30,
          "sbatch_args":["--qos=low"],"job_dir":"jobs","env":{"SLURM_CONF":"/etc/s.conf"},
          "kdispatch":"/opt/kd/kdispatch-full","parallel":3})",
      "chips.json");
  EXPECT_EQ(full.slurm->gres_name, "tpu");
  EXPECT_EQ(full.slurm->devices, (std::vector<std::string>{"/dev/accel{index}"}));
  EXPECT_EQ(full.slurm->poll_interval_s, 0.2);
  EXPECT_EQ(full.slurm->time_limit_minutes, 30);
  EXPECT_EQ(full.slurm->sbatch_args, (std::vector<std::string>{"--qos=low"}));
  EXPECT_EQ(full.slurm->env.at("SLURM_CONF"), "/etc/s.conf");
  EXPECT_EQ(full.slurm->kdispatch, "/opt/kd/kdispatch-full");
  EXPECT_EQ(full.slurm->parallel, 3);

  // "local" is today's form; a local inventory has no Slurm chip.
  auto local = parse_chip_inventory(R"({"scheduler":"local","chips":[{"id":"0"}]})", "chips.json");
  EXPECT_FALSE(local.slurm.has_value());
  EXPECT_THROW(local.slurm_chip(), Error);
}

TEST(Chips, BadSlurmInventoriesNameTheField) {
  const std::string head = R"({"scheduler":"slurm","partition":"tpu","gres":"gpu:tpu:1",)";
  EXPECT_EQ(error_of(R"({"scheduler":"pbs","chips":[]})"),
            "chips.json: \"scheduler\" must be \"local\" or \"slurm\"");
  EXPECT_EQ(error_of(R"({"scheduler":"slurm","gres":"gpu:tpu:1","chip_env":"X"})"),
            "chips.json: missing field \"partition\"");
  EXPECT_EQ(error_of(R"({"scheduler":"slurm","partition":"tpu","chip_env":"X"})"),
            "chips.json: missing field \"gres\"");
  EXPECT_EQ(error_of(R"({"scheduler":"slurm","partition":"tpu","gres":"gpu:tpu:1"})"),
            "chips.json: missing field \"chip_env\"");
  EXPECT_EQ(
      error_of(R"({"scheduler":"slurm","partition":"tpu","gres":"gpu:tpu:2","chip_env":"X"})"),
      "chips.json: \"gres\" must name one chip as sbatch --gres takes it (\"gpu:tpu:1\")");
  EXPECT_EQ(error_of(head + R"("chip_env":"A B"})"),
            "chips.json: \"chip_env\" must be an environment variable name");
  EXPECT_EQ(error_of(head + R"("chip_env":"X","poll_interval_s":"1"})"),
            "chips.json: \"poll_interval_s\" must be a number from 0.05 to 600");
  EXPECT_EQ(error_of(head + R"("chip_env":"X","time_limit_minutes":0})"),
            "chips.json: \"time_limit_minutes\" must be an integer from 1 to 525600");
  EXPECT_EQ(error_of(head + R"("chip_env":"X","sbatch_args":"--qos=low"})"),
            "chips.json: \"sbatch_args\" must be an array of strings");
  EXPECT_EQ(error_of(head + R"("chip_env":"X","job_dir":"../out"})"),
            "chips.json: \"job_dir\" must be a relative path beneath the run directory");
  EXPECT_EQ(error_of(head + R"("chip_env":"X","kdispatch":"kdispatch-full"})"),
            "chips.json: \"kdispatch\" must be an absolute path");
  EXPECT_EQ(error_of(head + R"("chip_env":"X","devices":["accel0"]})"),
            "chips.json: devices[0] must be an absolute path");
  EXPECT_EQ(error_of(head + R"("chip_env":"X","chips":[]})"),
            "chips.json: unknown field \"chips\"");
  EXPECT_EQ(error_of(head + R"("chip_env":"X","kind":"fpga"})"),
            "chips.json: kind \"fpga\" is not tpu, gpu or cpu");
}

TEST(Chips, DefaultInventoryLoads) {
  auto inv = load_chip_inventory(policy_file("chips.json"));
  EXPECT_GE(inv.chips.size(), 2u);
}

}  // namespace
}  // namespace kd::contract
