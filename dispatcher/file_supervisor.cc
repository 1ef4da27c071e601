#include "dispatcher/file_supervisor.h"

#include <fcntl.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdio>

#include "common/errors.h"
#include "common/fd.h"
#include "common/files.h"
#include "common/json_read.h"
#include "common/sha256.h"
#include "common/text.h"
#include "common/time.h"

namespace kd::dispatcher {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr size_t kSaidMax = 2000;  // the model's text kept with a request: its last characters
constexpr size_t kShownWidth = 100;

fs::path file_of(const fs::path& dir, const char* folder, const std::string& name) {
  return dir / folder / (name + ".json");
}

void remove_if_there(const fs::path& p) {
  std::error_code ec;
  fs::remove(p, ec);
  if (ec) throw Error("unlink(" + quote(p.string()) + "): " + ec.message());
}

}  // namespace

std::string supervision_call_name(const std::string& call_id) {
  bool plain = !call_id.empty() && call_id.size() <= 64;
  for (char c : call_id)
    plain = plain && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-');
  return plain ? call_id : "call-" + sha256_hex(call_id).substr(0, 16);
}

void make_supervision_dir(const fs::path& dir) {
  for (const char* folder :
       {kSupervisionPending, kSupervisionDecisions, kSupervisionDecided, kSupervisionErrors}) {
    std::error_code ec;
    fs::create_directories(dir / folder, ec);
    if (ec) throw Error("mkdir(" + quote((dir / folder).string()) + "): " + ec.message());
  }
}

Answer parse_supervision_answer(const json& doc, const std::string& tool, size_t argv_size,
                                const std::string& where) {
  JsonObjectReader in(doc, where);
  in.allow_only({"decision", "reason", "prefix_words", "notes"});
  const std::string decision = in.choice("decision", {"approve", "deny", "approve_prefix", "stop"});
  Answer a;
  for (const auto& n : in.strings("notes", true)) {
    if (trim(n).empty()) in.field_error("notes", "must not hold a blank note");
    a.notes.push_back(n);
  }
  if (decision == "deny") {
    a.kind = Answer::Kind::Deny;
    a.reason = in.string("reason");
    if (trim(a.reason).empty()) in.field_error("reason", "must say why (the model reads it)");
  } else if (in.has("reason")) {
    in.field_error("reason", "is for deny only");
  }
  if (decision == "approve_prefix") {
    if (argv_size == 0)
      in.field_error("decision", "approve_prefix approves commands; a " + tool +
                                     " takes approve, deny or stop");
    a.kind = Answer::Kind::ApprovePrefix;
    a.prefix_words = in.has("prefix_words") ? in.count_in("prefix_words", 1, argv_size) : argv_size;
  } else if (in.has("prefix_words")) {
    in.field_error("prefix_words", "is for approve_prefix only");
  }
  if (decision == "approve") a.kind = Answer::Kind::Approve;
  if (decision == "stop") a.kind = Answer::Kind::Stop;
  return a;
}

bool post_supervision_answer(const fs::path& dir, const std::string& name, const json& answer) {
  const fs::path final_path = file_of(dir, kSupervisionDecisions, name);
  // A hidden name the session never reads (one per call, for concurrent posts); the rename below
  // is what it wakes on.
  static std::atomic<unsigned> seq{0};
  const fs::path tmp = dir / kSupervisionDecisions /
                       ("." + name + "." + std::to_string(::getpid()) + "." +
                        std::to_string(seq.fetch_add(1)) + ".tmp");
  write_file_atomic(tmp, answer.dump(2) + "\n");
  if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, final_path.c_str(), RENAME_NOREPLACE) == 0)
    return true;
  const int err = errno;
  remove_if_there(tmp);
  if (err == EEXIST) return false;
  throw_sys("renameat2", quote(tmp.string()) + " -> " + quote(final_path.string()), err);
}

FileSupervisor::FileSupervisor(fs::path dir, std::string experiment)
    : Supervisor("file"), dir_(std::move(dir)), experiment_(std::move(experiment)) {
  make_supervision_dir(dir_);
}

void FileSupervisor::show(std::string_view text) {
  std::lock_guard lock(mu_);
  said_ += text;
  if (said_.size() > kSaidMax) said_.erase(0, said_.size() - kSaidMax);
}

void FileSupervisor::turn(int number) {
  std::lock_guard lock(mu_);
  turn_ = number;
  said_.clear();
}

json FileSupervisor::request_json(const ApprovalRequest& r, const std::string& name) {
  std::lock_guard lock(mu_);
  json req = {{"call_id", name},
              {"tool", r.tool},
              {"experiment", experiment_},
              {"turn", turn_},
              {"shown", render_request(r, kShownWidth)},
              {"model_text", said_},
              {"asked_at", utc_now_rfc3339()}};
  if (name != r.call_id) req["model_call_id"] = r.call_id;
  if (r.tool == "commit") {
    req["message"] = r.message;
  } else {
    req["command"] = r.argv;
  }
  return req;
}

void FileSupervisor::approved_by_prefix(const ApprovalRequest& r,
                                        const std::vector<std::string>& prefix) {
  std::string name;
  {
    std::lock_guard lock(mu_);
    name = supervision_call_name(r.call_id.empty() ? "request-" + std::to_string(++unnamed_)
                                                   : r.call_id);
  }
  json done = request_json(r, name);
  done["answer"] = {{"decision", "approved_by_prefix"}, {"prefix", prefix}};
  done["decided_at"] = utc_now_rfc3339();
  write_file_atomic(file_of(dir_, kSupervisionDecided, name), done.dump(2) + "\n");
}

Answer FileSupervisor::ask(const ApprovalRequest& r) {
  std::string name;
  {
    std::lock_guard lock(mu_);
    name = supervision_call_name(r.call_id.empty() ? "request-" + std::to_string(++unnamed_)
                                                   : r.call_id);
  }
  const fs::path pending = file_of(dir_, kSupervisionPending, name),
                 decision = file_of(dir_, kSupervisionDecisions, name),
                 decided = file_of(dir_, kSupervisionDecided, name),
                 refused = file_of(dir_, kSupervisionErrors, name);
  // Files of an earlier request with the same id (an earlier session under this directory) are
  // not answers to this one.
  for (const auto& p : {decision, decided, refused})
    remove_if_there(p);
  // Watched before the request is posted, so no answer can come unseen.
  UniqueFd in(::inotify_init1(IN_CLOEXEC));
  if (!in) throw_sys("inotify_init1", "", errno);
  const fs::path decisions = dir_ / kSupervisionDecisions;
  if (::inotify_add_watch(in.get(), decisions.c_str(), IN_CLOSE_WRITE | IN_MOVED_TO) < 0)
    throw_sys("inotify_add_watch", quote(decisions.string()), errno);
  const json request = request_json(r, name);
  write_file_atomic(pending, request.dump(2) + "\n");
  for (;;) {
    std::error_code ec;
    if (fs::exists(decision, ec)) {
      try {
        const json doc = parse_json_document(read_file(decision), decision.string());
        Answer a = parse_supervision_answer(doc, r.tool, r.argv.size(), decision.string());
        json done = request;
        done["answer"] = doc;
        done["decided_at"] = utc_now_rfc3339();
        write_file_atomic(decided, done.dump(2) + "\n");
        remove_if_there(pending);
        remove_if_there(decision);
        remove_if_there(refused);
        return a;
      } catch (const Error& e) {
        // Refused: the request stays pending, the error says why, the next answer is read. The
        // answer goes first, so whoever sees the error may put the next one in place.
        remove_if_there(decision);
        const json why = {
            {"call_id", name}, {"error", e.what()}, {"refused_at", utc_now_rfc3339()}};
        write_file_atomic(refused, why.dump(2) + "\n");
      }
    }
    char buf[4096];
    ssize_t n = ::read(in.get(), buf, sizeof buf);
    if (n < 0 && errno != EINTR) throw_sys("read", "inotify " + quote(decisions.string()), errno);
  }
}

}  // namespace kd::dispatcher
