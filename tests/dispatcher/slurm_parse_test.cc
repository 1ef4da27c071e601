// The Slurm client's readers on Slurm 22.05's own output (taken from a real cluster): squeue
// --json, `scontrol show job -d -o` and jobcomp/filetxt lines. No cluster needed.
#include <gtest/gtest.h>

#include "common/errors.h"
#include "dispatcher/slurm_client.h"

namespace kd::dispatcher::slurm {
namespace {

TEST(SlurmParse, SqueueJsonGivesStateExitCodeSignalNodeAndChip) {
  const std::string text = R"json({"meta": {"plugin": {"type": "openapi/v0.0.38"}}, "errors": [],
    "jobs": [
      {"job_id": 10, "job_state": "FAILED", "exit_code": 768, "nodes": "kd1", "gres_detail": [],
       "state_reason": "NonZeroExitCode"},
      {"job_id": 11, "job_state": "FAILED", "exit_code": 9, "nodes": "kd1", "gres_detail": [],
       "state_reason": "JobLaunchFailure"},
      {"job_id": 12, "job_state": "RUNNING", "exit_code": 0, "nodes": "kd2",
       "gres_detail": ["gpu:tpu:1(IDX:2)"], "state_reason": "None"},
      {"job_id": 13, "job_state": "PENDING", "exit_code": 0, "nodes": "", "gres_detail": [],
       "state_reason": "Resources"},
      {"job_id": 14, "job_state": "COMPLETED", "exit_code": 0, "nodes": "kd1", "gres_detail": [],
       "state_reason": "None"}]
})json";
  auto jobs = parse_squeue_json(text);
  ASSERT_EQ(jobs.size(), 5u);
  EXPECT_EQ(jobs["10"].phase, Phase::Failed);
  EXPECT_EQ(jobs["10"].exit_code, 3);
  EXPECT_EQ(jobs["10"].signal, 0);
  EXPECT_EQ(jobs["10"].reason, "NonZeroExitCode");
  EXPECT_EQ(jobs["11"].exit_code, 0);
  EXPECT_EQ(jobs["11"].signal, 9);
  EXPECT_EQ(jobs["12"].phase, Phase::Running);
  EXPECT_EQ(jobs["12"].gres_index, "2");
  EXPECT_EQ(jobs["12"].node, "kd2");
  EXPECT_EQ(jobs["12"].exit_code, -1);  // not finished
  EXPECT_EQ(jobs["13"].phase, Phase::Pending);
  EXPECT_EQ(jobs["14"].phase, Phase::Succeeded);
  EXPECT_EQ(jobs["14"].exit_code, 0);
}

TEST(SlurmParse, SqueueOutputThatIsNotItsJsonIsAnError) {
  EXPECT_THROW(parse_squeue_json("squeue: error: something"), Error);
  EXPECT_THROW(parse_squeue_json(R"({"meta": {}})"), Error);
}

TEST(SlurmParse, ScontrolAndJobcompLinesGiveTheSameFields) {
  auto scontrol = status_from_key_values(parse_key_values(
      "JobId=13 JobName=s.sh JobState=NODE_FAIL Reason=NodeDown Dependency=(null) "
      "ExitCode=0:0 NodeList=kd1 BatchHost=kd1 JOB_GRES=gpu:tpu:1   Nodes=kd1 CPU_IDs=0 Mem=0 "
      "GRES=gpu:tpu:1(IDX:3) Command=/tmp/a dir/s.sh WorkDir=/tmp/a dir"));
  EXPECT_EQ(scontrol.id, "13");
  EXPECT_EQ(scontrol.state, "NODE_FAIL");
  EXPECT_EQ(scontrol.phase, Phase::Failed);
  EXPECT_EQ(scontrol.reason, "NodeDown");
  EXPECT_EQ(scontrol.node, "kd1");
  EXPECT_EQ(scontrol.gres_index, "3");
  EXPECT_EQ(parse_key_values("Command=/tmp/a dir/s.sh WorkDir=/w")["Command"], "/tmp/a dir/s.sh");

  auto jobcomp = status_from_key_values(parse_key_values(
      "JobId=10 UserId=root(0) GroupId=root(0) Name=f.sh JobState=FAILED Partition=kd "
      "TimeLimit=UNLIMITED StartTime=2026-12-04T21:27:37 EndTime=2026-12-04T21:27:43 "
      "NodeList=kd1 NodeCnt=1 ProcCnt=1 WorkDir=/tmp/mtest ReservationName= "
      "Tres=cpu=1,mem=1000M,node=1,billing=1 Account= QOS= WcKey= Cluster=unknown "
      "DerivedExitCode=0:0 ExitCode=3:0"));
  EXPECT_EQ(jobcomp.id, "10");
  EXPECT_EQ(jobcomp.phase, Phase::Failed);
  EXPECT_EQ(jobcomp.exit_code, 3);
  EXPECT_EQ(jobcomp.node, "kd1");
  EXPECT_EQ(jobcomp.gres_index, "");

  auto pending = status_from_key_values(
      parse_key_values("JobId=20 JobState=PENDING Reason=Resources ExitCode=0:0 NodeList=(null)"));
  EXPECT_EQ(pending.phase, Phase::Pending);
  EXPECT_EQ(pending.exit_code, -1);
  EXPECT_EQ(pending.node, "");
}

TEST(SlurmParse, EveryFinalStateOtherThanCompletedIsAFailure) {
  EXPECT_EQ(phase_of_state("COMPLETED"), Phase::Succeeded);
  for (const char* s : {"FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "OUT_OF_MEMORY",
                        "BOOT_FAIL", "DEADLINE"})
    EXPECT_EQ(phase_of_state(s), Phase::Failed) << s;
  EXPECT_EQ(phase_of_state("RUNNING"), Phase::Running);
  EXPECT_EQ(phase_of_state("COMPLETING"), Phase::Running);
  EXPECT_EQ(phase_of_state("PENDING"), Phase::Pending);
  EXPECT_EQ(phase_of_state("REQUEUED"), Phase::Pending);
}

}  // namespace
}  // namespace kd::dispatcher::slurm
