// The boundary scanner and the event prefilter, below the importer: SIMD and scalar scanners agree
// bit for bit (strings, escapes, brackets in strings), events and metadata come out where they are.
#include "advisor/import/event_prefilter.h"
#include "advisor/import/trace_splitter.h"

#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

using namespace gpuwise::advisor;

namespace {

struct Scan {
  bool ok;
  std::string error;
  std::vector<std::pair<size_t, size_t>> events;
  std::string meta;
  size_t eventsEnd;
};

Scan scanAll(const std::string& text, bool scalar) {
  std::string buf = text + std::string(64, ' ');
  TraceSplitter s;
  s.forceScalar(scalar);
  Scan r;
  r.ok = s.scan(buf.data(), text.size(), true);
  r.error = s.error();
  for (const auto& e : s.events())
    r.events.emplace_back(e.start, e.end);
  r.meta = s.meta();
  r.eventsEnd = s.eventsEnd();
  return r;
}

} // namespace

TEST_CASE("the splitter finds events and keeps the metadata around them") {
  const std::string text =
      R"({"schemaVersion": 1, "a": "[not an array]", "traceEvents": [{"x": "}{"}, {"y": [1, {"z": "\"]"}]}], "b": {"c": [2]}})";
  for (bool scalar : {false, true}) {
    const Scan r = scanAll(text, scalar);
    INFO(r.error);
    REQUIRE(r.ok);
    REQUIRE(r.events.size() == 2);
    CHECK(text.substr(r.events[0].first, r.events[0].second - r.events[0].first) ==
          R"({"x": "}{"})");
    CHECK(text.substr(r.events[1].first, r.events[1].second - r.events[1].first) ==
          R"({"y": [1, {"z": "\"]"}]})");
    CHECK(r.meta ==
          R"({"schemaVersion": 1, "a": "[not an array]", "traceEvents": null, "b": {"c": [2]}})");
    CHECK(text[r.eventsEnd - 1] == ']');
  }
}

TEST_CASE("SIMD and scalar scanners agree on random bracket, quote and backslash soup") {
  std::mt19937 rng(12345);
  const char alphabet[] = "{}[]\"\\\\a ,:";
  for (int round = 0; round < 3000; ++round) {
    std::string text = "{\"traceEvents\": [";
    const size_t n = 1 + rng() % 400;
    for (size_t i = 0; i < n; ++i)
      text += alphabet[rng() % (sizeof(alphabet) - 1)];
    const Scan a = scanAll(text, false);
    const Scan b = scanAll(text, true);
    INFO(text);
    CHECK(a.ok == b.ok);
    CHECK(a.error == b.error);
    CHECK(a.events == b.events);
    CHECK(a.meta == b.meta);
  }
}

TEST_CASE("scanning in pieces gives the same events as scanning at once") {
  std::string text = "{\"traceEvents\": [";
  for (int i = 0; i < 200; ++i) {
    if (i) text += ", ";
    text +=
        R"({"ph": "X", "name": "k\"\\)" + std::to_string(i) + R"(", "args": {"grid": [1, 2, 3]}})";
  }
  text += "]}";
  const Scan whole = scanAll(text, false);
  REQUIRE(whole.ok);
  REQUIRE(whole.events.size() == 200);
  for (size_t step : {1, 7, 63, 64, 65, 200}) {
    std::string buf = text + std::string(64, ' ');
    TraceSplitter s;
    std::vector<std::pair<size_t, size_t>> events;
    size_t avail = 0;
    while (avail < text.size()) {
      avail = std::min(text.size(), avail + step);
      REQUIRE(s.scan(buf.data(), avail, avail == text.size()));
    }
    for (const auto& e : s.events())
      events.emplace_back(e.start, e.end);
    CHECK(events == whole.events);
  }
}

TEST_CASE("the prefilter drops operators, frames, flows and thread names; keeps the rest") {
  CHECK(isDroppableEvent(R"({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1})", false));
  CHECK(isDroppableEvent(
      "{\n    \"ph\": \"X\", \"cat\": \"Operator\", \n    \"name\": \"aten::empty\"", false));
  CHECK(isDroppableEvent(R"({"ph": "X", "cat": "python_function", "name": "train.py(10): step"})",
                         false));
  CHECK(isDroppableEvent(R"({"ph": "f", "id": 5, "pid": 1})", false));
  CHECK(isDroppableEvent(R"({"ph": "s", "id": 5, "pid": 1})", false));
  CHECK(isDroppableEvent(
      R"({"name": "thread_name", "ph": "M", "pid": 1, "tid": 2, "args": {"name": "x"}})", false));
  CHECK(isDroppableEvent(R"({"name": "thread_sort_index", "ph": "M"})", false));

  CHECK_FALSE(
      isDroppableEvent(R"({"ph": "X", "cat": "cpu_op", "name": "aten::mm"})", true)); // asked for
  CHECK_FALSE(
      isDroppableEvent(R"({"ph": "X", "cat": "Operator", "name": "ProfilerStep#5"})", false));
  CHECK_FALSE(isDroppableEvent(
      R"({"ph": "X", "cat": "Operator", "name": "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"})",
      false));
  CHECK(isDroppableEvent(R"({"ph": "X", "cat": "cpu_op", "name": "enumerate_all"})", false));
  CHECK_FALSE(isDroppableEvent(
      R"({"ph": "X", "cat": "python_function", "name": "torch/utils/data/dataloader.py(703): __next__"})",
      false));
  CHECK_FALSE(isDroppableEvent(R"({"ph": "X", "cat": "kernel", "name": "k"})", false));
  CHECK_FALSE(isDroppableEvent(R"({"ph": "X", "cat": "user_annotation", "name": "x"})", false));
  CHECK_FALSE(isDroppableEvent(R"({"name": "process_name", "ph": "M", "args": {"name": "python"}})",
                               false));
  CHECK_FALSE(isDroppableEvent(R"({"ph": "i", "s": "t", "name": "[memory]"})", false));
  // Anything in an unexpected order or spelling is kept and decoded in full.
  CHECK_FALSE(isDroppableEvent(R"({"cat": "cpu_op", "ph": "X", "name": "aten::mm"})", false));
  CHECK_FALSE(isDroppableEvent(R"({"ph": "X", "cat": "cpu\u005fop", "name": "aten::mm"})", false));
  CHECK_FALSE(isDroppableEvent(R"({"ph": "X", "cat": "python_function", "name": "a\"b"})", false));
  CHECK_FALSE(isDroppableEvent(R"({"ph": 1})", false));
  CHECK_FALSE(isDroppableEvent("{", false));
}

TEST_CASE("compaction keeps the wanted events, in order, as a JSON array") {
  std::string buf =
      R"([{"ph": "X", "cat": "cpu_op", "name": "a"}, {"ph": "X", "cat": "kernel", "name": "k1"},)"
      R"( {"ph": "f", "id": 1},{"ph": "X", "cat": "kernel", "name": "k2"}])";
  std::vector<EventSpan> spans;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < buf.size(); ++i) { // no strings with braces here: a simple depth count
    if (buf[i] == '{' && depth++ == 0) start = i;
    if (buf[i] == '}' && --depth == 0) spans.push_back({start, i + 1});
  }
  REQUIRE(spans.size() == 4);
  size_t dropped = 0;
  const size_t end =
      compactEvents(buf.data(), 0, buf.size() - 1, spans.data(), spans.size(), false, &dropped);
  REQUIRE(end != 0);
  CHECK(dropped == 2);
  CHECK(
      buf.substr(0, end) ==
      R"([{"ph": "X", "cat": "kernel", "name": "k1"},{"ph": "X", "cat": "kernel", "name": "k2"}])");

  std::string bad = R"([{"ph": "X"} 7 {"ph": "X"}])";
  std::vector<EventSpan> two{{1, 12}, {15, 26}};
  CHECK(compactEvents(bad.data(), 0, bad.size() - 1, two.data(), 2, false, &dropped) == 0);
  std::string trailing = R"([{"ph": "X"}, 7])";
  std::vector<EventSpan> one{{1, 12}};
  CHECK(compactEvents(trailing.data(), 0, trailing.size() - 1, one.data(), 1, false, &dropped) ==
        0);
}
