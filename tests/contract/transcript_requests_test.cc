// Linear request records: each holds only what changed, replays to the exact body, and a record
// that does not fit (kept messages that were never sent, an edited append) is refused.
#include "contract/transcript_requests.h"

#include <gtest/gtest.h>

#include "common/sha256.h"

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

// An Anthropic-style conversation whose user turns carry tool outputs: output i is recorded at
// seq 10 + i before the request that sends it.
json tool_turn(int i) {
  return {{"role", "user"},
          {"content",
           json::array({{{"type", "tool_result"},
                         {"tool_use_id", "c" + std::to_string(i)},
                         {"content", "out" + std::to_string(i) + std::string(5000, 'o')}}})}};
}

TEST(TranscriptRequests, AToolOutputIsReferredToNotRepeated) {
  RequestRebuilder rebuild(
      [](const std::string&) -> std::string { throw std::runtime_error("no blobs"); });
  RecordedOutputs outputs;
  json msgs = json::array({user("task", false)});
  json prev = nullptr;
  for (int i = 0; i < 5; ++i) {
    msgs.push_back(assistant("call " + std::to_string(i)));
    msgs.push_back(tool_turn(i));
    const std::string out = msgs.back()["content"][0]["content"];
    outputs[sha256_hex(out)] = 10 + i;
    EXPECT_FALSE(rebuild.feed(10 + i, "tool_result", {{"id", "c"}, {"content", out}}));
    json body = {{"model", "m"}, {"messages", msgs}};
    json rec = request_delta(prev, body, outputs);
    ASSERT_TRUE(rec.contains("refs"));
    EXPECT_EQ(rec["refs"].back(), json::array({msgs.size() - 1, "/content/0/content", 10 + i}));
    EXPECT_LT(rec.dump().size(), 1000u) << "the output is not repeated";
    std::optional<json> rebuilt = rebuild.feed(20 + i, "request", rec);
    ASSERT_TRUE(rebuilt);
    EXPECT_EQ(request_bytes(*rebuilt), request_bytes(body));
    prev = body;
  }
}

TEST(TranscriptRequests, ARefToAnEditedOrMissingOutputIsRefused) {
  auto no_blobs = [](const std::string&) -> std::string { throw std::runtime_error("no blobs"); };
  json body = {{"model", "m"}, {"messages", json::array({user("task", false), tool_turn(0)})}};
  const std::string out = body["messages"][1]["content"][0]["content"];
  json rec = request_delta(nullptr, body, {{sha256_hex(out), 3}});
  ASSERT_TRUE(rec.contains("refs"));
  auto refused = [&](RequestRebuilder& rebuild, const json& r, const std::string& why) {
    try {
      rebuild.apply(r);
      ADD_FAILURE() << "accepted; expected: " << why;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  };
  {
    RequestRebuilder rebuild(no_blobs);
    rebuild.add_output(3, {{"content", out.substr(0, 100) + "edited" + out.substr(106)}});
    refused(rebuild, rec, "does not match the recorded sha256");
  }
  {
    RequestRebuilder rebuild(no_blobs);
    rebuild.add_output(4, {{"content", out}});
    refused(rebuild, rec, "refers to record 3, which is no earlier tool_result");
  }
  {
    RequestRebuilder rebuild(no_blobs);
    rebuild.add_output(3, {{"content", out}});
    json moved = rec;
    moved["refs"][0][1] = "/content/0/tool_use_id";
    refused(rebuild, moved, "names a value, not a null");
  }
  {
    RequestRebuilder rebuild([&](const std::string& d) {
      if (d != sha256_hex(out)) throw std::runtime_error("no such blob");
      return out;
    });
    rebuild.add_output(3, {{"content_ref", sha256_hex(out)}});
    EXPECT_EQ(request_bytes(rebuild.apply(rec)), request_bytes(body)) << "an output in a blob";
  }
}

}  // namespace
}  // namespace kd::contract::transcript
