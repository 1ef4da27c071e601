#include "agents/sse.h"

#include <gtest/gtest.h>

#include "agents/provider.h"

namespace kd::agents {
namespace {

std::vector<SseEvent> parse_all(const std::vector<std::string>& chunks) {
  std::vector<SseEvent> out;
  SseParser p([&](const SseEvent& e) { out.push_back(e); });
  for (const auto& c : chunks)
    p.feed(c);
  p.finish();
  return out;
}

TEST(Sse, NamedEventsCommentsAndDefaults) {
  auto ev = parse_all({": hello\n\nevent: a\ndata: {\"x\":1}\n\ndata: two\n\n"});
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].name, "a");
  EXPECT_EQ(ev[0].data, "{\"x\":1}");
  EXPECT_EQ(ev[1].name, "message");
  EXPECT_EQ(ev[1].data, "two");
}

TEST(Sse, MultiLineDataIsJoinedWithNewline) {
  auto ev = parse_all({"data: {\"a\":\ndata: 1}\n\n"});
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].data, "{\"a\":\n1}");
}

TEST(Sse, CrLfSplitAcrossChunksAndBareCr) {
  auto ev = parse_all({"data: a\r", "\n\r", "\ndata: b\r\r"});
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].data, "a");
  EXPECT_EQ(ev[1].data, "b");
}

// Found by fuzz_sse: an empty chunk between a '\r' and its '\n' split the CRLF in two line ends,
// which ended the event early.
TEST(Sse, EmptyChunkInsideACrLfChangesNothing) {
  auto ev = parse_all({"data: a\r", "", "\ndata: b\r\n\r\n"});
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].data, "a\nb");
}

TEST(Sse, BomSplitAcrossChunksIsStripped) {
  auto ev = parse_all({"\xEF", "\xBB",
                       "\xBF"
                       "data: x\n\n"});
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].data, "x");
}

TEST(Sse, FieldWithoutSpaceAndUnknownFieldsAndEmptyEvents) {
  auto ev = parse_all({"data:x\nid: 3\nretry: 10\nfoo: bar\n\nevent: only-name\n\n"});
  ASSERT_EQ(ev.size(), 1u) << "an event without data dispatches nothing";
  EXPECT_EQ(ev[0].data, "x");
}

TEST(Sse, LastEventWithoutBlankLineIsFlushedAtEnd) {
  auto ev = parse_all({"data: [DONE]"});
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].data, "[DONE]");
}

// A recorded Anthropic tool-use stream (written for this test) with a ping, a comment, an
// unknown event, an unknown block type and multi-byte text.
const std::string kAnthropicStream =
    "event: message_start\n"
    "data: "
    "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_r1\",\"type\":\"message\",\"role\":"
    "\"assistant\","
    "\"model\":\"m\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":210,"
    "\"cache_read_input_tokens\":40,\"output_tokens\":1}}}\n\n"
    ": keep-alive\n\n"
    "event: content_block_start\n"
    "data: "
    "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":"
    "\"\"}}\n\n"
    "event: ping\ndata: {\"type\": \"ping\"}\n\n"
    "event: content_block_delta\n"
    "data: "
    "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":"
    "\"Tiling \xC3\xA9t\xC3\xA9 \"}}\n\n"
    "event: content_block_delta\n"
    "data: "
    "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":"
    "\"\xE2\x9C\x93 next.\"}}\n\n"
    "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
    "event: brand_new_event\ndata: {\"type\":\"brand_new_event\",\"z\":[1,2]}\n\n"
    "event: content_block_start\n"
    "data: "
    "{\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":"
    "\"toolu_a\","
    "\"name\":\"read_file\",\"input\":{}}}\n\n"
    "event: content_block_delta\n"
    "data: "
    "{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\","
    "\"partial_json\":\"\"}}\n\n"
    "event: content_block_delta\n"
    "data: "
    "{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\","
    "\"partial_json\":\"{\\\"pa\"}}\n\n"
    "event: content_block_delta\n"
    "data: "
    "{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\","
    "\"partial_json\":\"th\\\": \\\"k.py\\\"}\"}}\n\n"
    "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n"
    "event: content_block_start\n"
    "data: "
    "{\"type\":\"content_block_start\",\"index\":2,\"content_block\":{\"type\":\"tool_use\",\"id\":"
    "\"toolu_b\","
    "\"name\":\"list_dir\",\"input\":{}}}\n\n"
    "event: content_block_delta\n"
    "data: "
    "{\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"input_json_delta\","
    "\"partial_json\":\"{\\\"path\\\":\\\".\\\"}\"}}\n\n"
    "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":2}\n\n"
    "event: message_delta\n"
    "data: "
    "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},"
    "\"usage\":{\"output_tokens\":61}}\n\n"
    "event: message_stop\r\ndata: {\"type\":\"message_stop\"}\r\n\r\n";

const std::string kOpenAIStream =
    "data: "
    "{\"id\":\"chatcmpl-r1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,"
    "\"delta\":{\"role\":"
    "\"assistant\",\"content\":\"Two \xE2\x9C\x93 \"},\"finish_reason\":null}],\"usage\":null}\n\n"
    ": keep-alive\n\n"
    "data: "
    "{\"id\":\"chatcmpl-r1\",\"object\":\"chat.completion.chunk\",\"choices\":[],\"obfuscation\":"
    "\"xx\"}\n\n"
    "data: "
    "{\"id\":\"chatcmpl-r1\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,"
    "\"id\":\"call_a\","
    "\"type\":\"function\",\"function\":{\"name\":\"read_file\",\"arguments\":\"\"}}]},\"finish_"
    "reason\":null}]}\n\n"
    "data: "
    "{\"id\":\"chatcmpl-r1\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,"
    "\"id\":\"call_b\","
    "\"type\":\"function\",\"function\":{\"name\":\"list_dir\",\"arguments\":\"{\\\"pa\"}}]},"
    "\"finish_reason\":null}]}\n\n"
    "data: "
    "{\"id\":\"chatcmpl-r1\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,"
    "\"function\":{\"arguments\":\"{\\\"path\\\":\\\"k.py\\\"}\"}}]},\"finish_reason\":null}]}\n\n"
    "data: "
    "{\"id\":\"chatcmpl-r1\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,"
    "\"function\":{\"arguments\":\"th\\\":\\\".\\\"}\"}}]},\"finish_reason\":null}]}\n\n"
    "data: "
    "{\"id\":\"chatcmpl-r1\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_"
    "calls\"}]}\n\n"
    "data: "
    "{\"id\":\"chatcmpl-r1\",\"choices\":[],\"usage\":{\"prompt_tokens\":300,\"completion_tokens\":"
    "44,\"total_tokens\":344}}\n\n"
    "data: [DONE]\n\n";

void expect_turn(const AssistantTurn& t, const std::string& text, long in, long out) {
  EXPECT_EQ(t.text, text);
  ASSERT_EQ(t.tool_calls.size(), 2u);
  EXPECT_EQ(t.tool_calls[0].id, t.tool_calls[0].id.substr(0, 6) == "toolu_" ? "toolu_a" : "call_a");
  EXPECT_EQ(t.tool_calls[0].name, "read_file");
  EXPECT_EQ(t.tool_calls[0].input, nlohmann::json({{"path", "k.py"}}));
  EXPECT_EQ(t.tool_calls[1].name, "list_dir");
  EXPECT_EQ(t.tool_calls[1].input, nlohmann::json({{"path", "."}}));
  EXPECT_TRUE(t.usage.reported);
  EXPECT_EQ(t.usage.input_tokens, in);
  EXPECT_EQ(t.usage.output_tokens, out);
}

AssistantTurn assemble(const Provider& p, const std::string& stream, size_t split, bool* done) {
  auto a = p.stream_assembler();
  SseParser parser([&](const SseEvent& e) { a->on_event(e); });
  parser.feed(std::string_view(stream).substr(0, split));
  parser.feed(std::string_view(stream).substr(split));
  parser.finish();
  EXPECT_FALSE(a->failure()) << a->failure()->message;
  *done = a->done();
  return a->take();
}

// Thinking, signature and text fields grow from what content_block_start gave them, delta by
// delta, into the echoed blocks; the turn's text is the text block's whole text.
TEST(RecordedStream, AnthropicBlockFieldsGrowFromTheirStartValues) {
  const std::string stream =
      "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\"}}\n\n"
      "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,"
      "\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}}\n\n"
      "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":"
      "\"thinking_delta\",\"thinking\":\"tile \"}}\n\n"
      "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":"
      "\"thinking_delta\",\"thinking\":\"by 128\"}}\n\n"
      "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":"
      "\"signature_delta\",\"signature\":\"c2ln\"}}\n\n"
      "data: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
      "data: {\"type\":\"content_block_start\",\"index\":1,"
      "\"content_block\":{\"type\":\"text\",\"text\":\"Plan: \"}}\n\n"
      "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":"
      "\"text_delta\",\"text\":\"tile\"}}\n\n"
      "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":"
      "\"text_delta\",\"text\":\" it.\"}}\n\n"
      "data: {\"type\":\"content_block_stop\",\"index\":1}\n\n"
      "data: {\"type\":\"message_stop\"}\n\n";
  auto p = make_anthropic_provider();
  std::vector<std::string> pieces;
  auto a = p->stream_assembler();
  a->on_text = [&](std::string_view s) { pieces.emplace_back(s); };
  SseParser parser([&](const SseEvent& e) { a->on_event(e); });
  parser.feed(stream);
  parser.finish();
  ASSERT_FALSE(a->failure()) << a->failure()->message;
  ASSERT_TRUE(a->done());
  AssistantTurn t = a->take();
  EXPECT_EQ(t.text, "Plan: tile it.");
  EXPECT_EQ(pieces, (std::vector<std::string>{"tile", " it."}));
  ASSERT_EQ(t.echo.size(), 2u);
  EXPECT_EQ(
      t.echo[0],
      nlohmann::json({{"type", "thinking"}, {"thinking", "tile by 128"}, {"signature", "c2ln"}}));
  EXPECT_EQ(t.echo[1], nlohmann::json({{"type", "text"}, {"text", "Plan: tile it."}}));
}

TEST(RecordedStream, AnthropicReplayedSplitAtEveryByte) {
  auto p = make_anthropic_provider();
  for (size_t split = 0; split <= kAnthropicStream.size(); ++split) {
    bool done = false;
    AssistantTurn t = assemble(*p, kAnthropicStream, split, &done);
    ASSERT_TRUE(done) << "split at " << split;
    expect_turn(t, "Tiling \xC3\xA9t\xC3\xA9 \xE2\x9C\x93 next.", 250, 61);
    EXPECT_EQ(t.stop_reason, "tool_use");
    ASSERT_EQ(t.echo.size(), 3u);
    EXPECT_EQ(t.echo[1]["input"], nlohmann::json({{"path", "k.py"}}));
    if (HasFailure()) FAIL() << "split at " << split;
  }
}

TEST(RecordedStream, OpenAIInterleavedParallelCallsReplayedSplitAtEveryByte) {
  auto p = make_openai_provider();
  for (size_t split = 0; split <= kOpenAIStream.size(); ++split) {
    bool done = false;
    AssistantTurn t = assemble(*p, kOpenAIStream, split, &done);
    ASSERT_TRUE(done) << "split at " << split;
    expect_turn(t, "Two \xE2\x9C\x93 ", 300, 44);
    EXPECT_EQ(t.stop_reason, "tool_calls");
    EXPECT_EQ(t.echo["tool_calls"][1]["function"]["arguments"], "{\"path\":\".\"}");
    if (HasFailure()) FAIL() << "split at " << split;
  }
}

TEST(RecordedStream, TruncatedStreamIsNotDone) {
  for (bool openai : {false, true}) {
    auto prov = openai ? make_openai_provider() : make_anthropic_provider();
    const std::string& stream = openai ? kOpenAIStream : kAnthropicStream;
    auto a = prov->stream_assembler();
    SseParser parser([&](const SseEvent& e) { a->on_event(e); });
    parser.feed(std::string_view(stream).substr(0, stream.size() - 30));
    parser.finish();
    EXPECT_FALSE(a->done()) << prov->wire();
  }
}

TEST(RecordedStream, ErrorEventAndMalformedDataAreFailures) {
  auto a = make_anthropic_provider()->stream_assembler();
  a->on_event({"error",
               "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":"
               "\"Overloaded\"}}"});
  ASSERT_TRUE(a->failure());
  EXPECT_EQ(a->failure()->kind, "error_event");
  EXPECT_EQ(a->failure()->type, "overloaded_error");

  auto o = make_openai_provider()->stream_assembler();
  o->on_event({"message", "{\"error\":{\"message\":\"boom\",\"type\":\"server_error\"}}"});
  ASSERT_TRUE(o->failure());
  EXPECT_EQ(o->failure()->kind, "error_event");

  auto m = make_openai_provider()->stream_assembler();
  m->on_event({"message", "{\"id\":"});
  ASSERT_TRUE(m->failure());
  EXPECT_EQ(m->failure()->kind, "malformed");
}

TEST(RecordedStream, ToolArgumentsThatAreNotJsonAreKeptRaw) {
  auto a = make_anthropic_provider()->stream_assembler();
  a->on_event({"content_block_start",
               "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_"
               "use\",\"id\":\"t\",\"name\":\"run\",\"input\":{}}}"});
  a->on_event({"content_block_delta",
               "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_"
               "delta\",\"partial_json\":\"{cmd: ls\"}}"});
  a->on_event({"content_block_stop", "{\"type\":\"content_block_stop\",\"index\":0}"});
  a->on_event({"message_stop", "{\"type\":\"message_stop\"}"});
  ASSERT_TRUE(a->done());
  AssistantTurn t = a->take();
  ASSERT_EQ(t.tool_calls.size(), 1u);
  EXPECT_FALSE(t.tool_calls[0].input_is_json);
  EXPECT_EQ(t.tool_calls[0].input_raw, "{cmd: ls");
  EXPECT_EQ(t.echo[0]["input"], nlohmann::json::object());
}

}  // namespace
}  // namespace kd::agents
