#include "dispatcher/llm_verifier.h"

#include "agents/roles.h"
#include "agents/session_runner.h"
#include "agents/tools.h"
#include "common/agent_file.h"
#include "common/files.h"
#include "dispatcher/author_tools.h"
#include "sandbox/box.h"
#include "sandbox/box_user.h"
#include "sandbox/profile.h"
#include "verify/verifier_report.h"

namespace kd::dispatcher {
using json = nlohmann::json;
namespace fs = std::filesystem;

LlmVerifierResult run_llm_verifier(const LlmVerifierInput& in) {
  const fs::path dir = in.run_dir / "verifier";
  const fs::path work = dir / "session";
  fs::create_directories(work);
  const std::string receipt_text = read_agent_file(in.receipt, kMaxAgentJsonBytes);
  write_file_atomic(work / "receipt.json", receipt_text);
  sandbox::hand_to_box_user(work);

  // Read-only everywhere but its own scratch copy: the snapshot and the receipt directory.
  sandbox::BoxSpec spec;
  spec.profile = sandbox::load_profile("verifier");
  spec.worktree = work;
  spec.ro = {in.snapshot, in.receipt.parent_path()};
  std::unique_ptr<sandbox::Box> box = sandbox::Box::open(spec);
  AuthorToolConfig tc;
  tc.box = box.get();
  tc.worktree = work;
  tc.finish_reply = "report accepted";
  AuthorToolHost host(tc);

  agents::SessionConfig sc;
  sc.session_id = in.brief.family + "-" + in.brief.experiment + "-verifier";
  sc.role = "verifier";
  sc.system_prompt = agents::verifier_system_prompt(in.brief.markdown());
  sc.first_user_message =
      "Report on the verification of " + in.brief.family + " " + in.brief.experiment +
      ".\n\n- The receipt is receipt.json in your work dir (" + work.string() + "), a copy of " +
      in.receipt_rel + ".\n- The frozen candidate is under " + in.snapshot.string() +
      " (read-only).\n- Call finish with the four sections; quote only numbers from the receipt.\n";
  sc.tools = agents::verifier_tools();
  sc.transcript_dir = dir;
  sc.resume = fs::exists(dir / "transcript.jsonl");
  sc.header = {{"family", in.brief.family},
               {"experiment", in.brief.experiment},
               {"brief_sha256", in.brief.sha256()},
               {"model",
                {{"provider", in.model.provider},
                 {"name", in.model.model},
                 {"base_url", in.model.base_url}}},
               {"chip", in.chip.id},
               {"worktree", work.string()},
               {"receipt", in.receipt_rel}};
  sc.finish.check = [&receipt_text](const json& report) {
    return verify::check_verifier_report(report, receipt_text);
  };
  agents::SessionResult r = run_session_blocking(sc, host, in.model);
  LlmVerifierResult out;
  out.end_reason = r.end_reason;
  out.transcript_head = r.transcript_head;
  if (r.finish) out.sections = verify::render_verifier_report(*r.finish);
  return out;
}

}  // namespace kd::dispatcher
