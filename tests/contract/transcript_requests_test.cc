// Linear request records: each holds only what changed, replays to the exact body, and a record
// that does not fit (kept messages that were never sent, an edited append) is refused.
#include "contract/transcript_requests.h"

#include <gtest/gtest.h>

namespace kd::contract::transcript {
namespace {

using json = nlohmann::json;

json user(const std::string& text, bool mark) {
  json b = {{"type", "text"}, {"text", text}};
  if (mark) b["cache_control"] = {{"type", "ephemeral"}};
  return {{"role", "user"}, {"content", json::array({b})}};
}

json assistant(const std::string& text) {
  return {{"role", "assistant"}, {"content", json::array({{{"type", "text"}, {"text", text}}})}};
}

// Bodies as a session sends them: the markers slide to the two newest user messages.
std::vector<json> bodies(int turns) {
  std::vector<json> out;
  for (int n = 1; n <= turns; ++n) {
    json msgs = json::array();
    for (int i = 0; i < n; ++i) {
      msgs.push_back(user("u" + std::to_string(i) + std::string(1000, 'x'), i >= n - 2));
      if (i + 1 < n) msgs.push_back(assistant("a" + std::to_string(i)));
    }
    out.push_back({{"model", "m"}, {"system", "brief"}, {"messages", msgs}, {"stream", true}});
  }
  return out;
}

TEST(TranscriptRequests, EachRecordHoldsWhatIsNewAndReplaysToTheSameBody) {
  std::vector<json> b = bodies(30);
  RequestRebuilder rebuild(
      [](const std::string&) -> std::string { throw std::runtime_error("no blobs"); });
  json prev = nullptr;
  size_t first_size = 0, last_size = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    json rec = request_delta(prev, b[i]);
    if (i == 0) {
      EXPECT_TRUE(rec.contains("fields"));
      first_size = rec.dump().size();
    } else {
      EXPECT_FALSE(rec.contains("fields")) << "unchanged fields are not repeated";
      EXPECT_EQ(rec["keep"], 2 * i - 1) << "a marker that moved on does not make a message new";
      EXPECT_EQ(rec["append"].size(), 2u);
    }
    last_size = rec.dump().size();
    json rebuilt = rebuild.apply(rec);
    EXPECT_EQ(request_bytes(rebuilt), request_bytes(b[i])) << "request " << i;
    prev = b[i];
  }
  EXPECT_LT(last_size, 2 * first_size) << "flat in the turn number";
  // A repeated request (a retry) keeps everything and appends nothing.
  json retry = request_delta(b.back(), b.back());
  EXPECT_EQ(retry["append"].size(), 0u);
  EXPECT_EQ(request_bytes(rebuild.apply(retry)), request_bytes(b.back()));
}

TEST(TranscriptRequests, RecordsThatDoNotFitAreRefused) {
  std::vector<json> b = bodies(3);
  auto no_blobs = [](const std::string&) -> std::string { throw std::runtime_error("no blobs"); };
  {
    RequestRebuilder rebuild(no_blobs);
    json second = request_delta(b[0], b[1]);
    EXPECT_THROW(rebuild.apply(second), std::runtime_error) << "no first record: no fields";
  }
  {
    RequestRebuilder rebuild(no_blobs);
    rebuild.apply(request_delta(nullptr, b[0]));
    json third = request_delta(b[1], b[2]);
    try {
      rebuild.apply(third);
      ADD_FAILURE() << "kept messages the previous request did not have";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("keeps 3 messages; the previous request had 1"),
                std::string::npos)
          << e.what();
    }
  }
  {
    RequestRebuilder rebuild(no_blobs);
    rebuild.apply(request_delta(nullptr, b[0]));
    json second = request_delta(b[0], b[1]);
    second["append"][1]["content"][0]["text"] = "edited";
    try {
      rebuild.apply(second);
      ADD_FAILURE() << "an edited append was accepted";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("does not match the recorded sha256"),
                std::string::npos);
    }
  }
  {
    RequestRebuilder rebuild(no_blobs);
    json whole = {{"turn", 1}, {"body", b[0]}};  // a record from before linear transcripts
    EXPECT_EQ(rebuild.apply(whole), b[0]);
    EXPECT_EQ(request_bytes(rebuild.apply(request_delta(b[0], b[1]))), request_bytes(b[1]));
  }
}

}  // namespace
}  // namespace kd::contract::transcript
