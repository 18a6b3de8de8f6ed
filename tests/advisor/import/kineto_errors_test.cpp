// What the importer must refuse, with one line naming the file and the problem: never a crash,
// never a partial trace presented as whole.
#include "advisor/import/kineto_importer.h"
#include "tests/advisor/import/import_test_util.h"

#include <catch2/catch.hpp>

#include <random>

using namespace gpuwise;
using namespace gpuwise::advisor;

namespace {

const std::string kGood = R"({"schemaVersion": 1, "traceEvents": [
  {"ph": "X", "cat": "kernel", "name": "k1", "pid": 0, "tid": 7, "ts": 100, "dur": 10, "args": {"device": 0, "stream": 7, "correlation": 1}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 5, "tid": 5, "ts": 90, "dur": 5, "args": {"correlation": 1}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 5, "tid": 5, "ts": 80, "dur": 30, "args": {"Input Dims": [[2, 2], [2, 2]]}},
  {"ph": "X", "cat": "kernel", "name": "k2 \"quoted\" \\ name", "pid": 0, "tid": 7, "ts": 120, "dur": 10, "args": {"device": 0, "stream": 7}}
], "deviceProperties": [{"id": 0, "name": "NVIDIA A100"}]})";

std::string errorOf(const std::string& bytes, const std::string& name = "t.json") {
  const auto r = importKinetoBuffer(bytes, name);
  CHECK(r.trace.processes.empty());
  CHECK(r.error.find('\n') == std::string::npos);
  if (!r.error.empty()) CHECK(r.error.rfind(name + ": ", 0) == 0);
  return r.error;
}

bool has(const std::string& s, const std::string& what) {
  return s.find(what) != std::string::npos;
}

} // namespace

TEST_CASE("the good trace imports, names with escapes included") {
  const auto r = importKinetoBuffer(kGood, "t.json");
  INFO(r.error);
  REQUIRE(r.ok());
  REQUIRE(r.trace.processes[0].kernels.size() == 2);
  CHECK(r.trace.processes[0].names.get(r.trace.processes[0].kernels[1].name) ==
        "k2 \"quoted\" \\ name");
}

TEST_CASE("empty and whitespace-only files") {
  CHECK(has(errorOf(""), "empty file"));
  CHECK(has(errorOf("  \n\t "), "only whitespace"));
  CHECK(has(errorOf(test::gzipString("")), "empty file"));
}

TEST_CASE("garbage and other formats") {
  CHECK(has(errorOf("hello world"), "not a JSON trace (the file starts with 'h', not '{' or '[')"));
  CHECK(has(errorOf(std::string("\x00\x01\x02\x03", 4)),
            "not a JSON trace (the file starts with 0x00"));
  CHECK(has(errorOf("\"just a string\""), "not a JSON trace"));
  CHECK(has(errorOf("42"), "not a JSON trace"));
  // SQLite (an Nsight Systems export) is not JSON either.
  CHECK(has(errorOf(std::string("SQLite format 3\0", 16)), "not a JSON trace"));
  std::mt19937 rng(7);
  std::string noise(100000, '\0');
  for (auto& c : noise)
    c = char(rng());
  noise[0] = 'x';
  CHECK(has(errorOf(noise), "not a JSON trace"));
}

TEST_CASE("JSON that is not a Chrome trace says what it is") {
  CHECK(has(errorOf(R"({"a": 1, "b": [1, 2]})"), "without a traceEvents array"));
  CHECK(has(
      errorOf(
          R"({"schema": "1.0.1", "pid": 7, "nodes": [{"name": "x", "id": 1}], "finish_ts": 9})"),
      "PyTorch execution trace"));
  CHECK(has(errorOf(R"([[-1, 1, 37888, 7], [-1, 1, 512, 7]])"), "PyTorch memory timeline"));
  CHECK(has(errorOf(R"({"traceEvents": [1, 2, 3]})"), "not event objects"));
  CHECK(has(errorOf(R"({"traceEvents": [{"ph": "X"}, 5, {"ph": "X"}]})"), "malformed traceEvents"));
  CHECK(has(errorOf(R"({"traceEvents": [{"ph": "X"}], "traceEvents": []})"), "two traceEvents"));
}

TEST_CASE("truncated JSON is an error wherever it is cut") {
  // Every cut point of a small trace: inside strings, numbers, args, between events, metadata.
  for (size_t cut = 1; cut < kGood.size(); ++cut) {
    const std::string part = kGood.substr(0, cut);
    const auto r = importKinetoBuffer(part, "t.json");
    INFO("cut at " << cut << ": " << r.error);
    CHECK_FALSE(r.ok());
    CHECK(r.trace.processes.empty());
  }
  CHECK(has(errorOf(kGood.substr(0, kGood.size() / 2)), "truncated JSON"));
}

TEST_CASE("truncated and corrupt gzip are errors") {
  const std::string gz = test::gzipString(kGood);
  for (size_t cut : {size_t(5), size_t(12), gz.size() / 2, gz.size() - 9, gz.size() - 1}) {
    const auto r = importKinetoBuffer(gz.substr(0, cut), "t.json.gz");
    INFO("cut at " << cut << ": " << r.error);
    CHECK_FALSE(r.ok());
    CHECK(r.error.find('\n') == std::string::npos);
  }
  CHECK(has(errorOf(gz.substr(0, gz.size() / 2), "t.json.gz"), "truncated gzip"));
  std::string flipped = gz;
  flipped[gz.size() - 6] ^= 0x5a; // the CRC32 in the trailer
  CHECK(has(errorOf(flipped, "t.json.gz"), "CRC"));
  std::string bad = gz;
  for (size_t i = 12; i < bad.size() - 8; i += 3)
    bad[i] = char(~bad[i]);
  CHECK_FALSE(errorOf(bad, "t.json.gz").empty());
  CHECK(has(errorOf(gz + "garbage!", "t.json.gz"), "after the end of the gzip stream"));
  // Zero padding after the stream (tape-style) is tolerated.
  const auto padded = importKinetoBuffer(gz + std::string(64, '\0'), "t.json.gz");
  CHECK(padded.ok());
}

TEST_CASE("data after the document, unbalanced brackets, malformed events") {
  CHECK(has(errorOf(kGood + " x"), "after the end of the JSON document"));
  CHECK(has(errorOf(kGood + "{}"), "after the end of the JSON document"));
  CHECK(has(errorOf("{\"traceEvents\": []}}"), "after the end"));
  CHECK(has(errorOf(R"({"traceEvents": [{"ph": "X", "cat": "kernel", "ts": 1 "dur": 2}]})"),
            "malformed JSON in traceEvents"));
  CHECK(
      has(errorOf(R"({"traceEvents": [{"ph": "X", "cat": "kernel", "ts": 1, "dur": 2}]} , "x": })"),
          "after the end"));
  CHECK_FALSE(errorOf(R"({"traceEvents": [], "deviceProperties": [1, }})").empty());
}

TEST_CASE("a trace with no events or no GPU work is valid and empty") {
  const auto r = importKinetoBuffer(R"({"traceEvents": []})", "t.json");
  REQUIRE(r.ok());
  CHECK(r.trace.processes[0].eventCount() == 0);
  const auto cpu = importKinetoBuffer(R"({"distributedInfo": {"rank": 34}, "traceEvents": [
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 1074, "tid": 1074, "ts": 5, "dur": 9}]})",
                                      "cpu.json");
  REQUIRE(cpu.ok());
  const auto& p = cpu.trace.processes[0];
  CHECK(p.kernels.empty());
  CHECK(p.copies.empty());
  CHECK(p.memsets.empty());
  CHECK(p.devices.empty());
  CHECK(p.info.rank == 34);
  CHECK(p.ranges.size() == 1);
}

TEST_CASE("a directory or no files at all are errors, not crashes") {
  test::TempDir dir;
  CHECK(has(importKineto({dir.path("")}).error, "cannot open"));
  CHECK_FALSE(importKineto({}).ok());
}

TEST_CASE("a parse error stops the reader midway, even when it waits for a free buffer") {
  std::string text = R"({"traceEvents": [)";
  for (int i = 0; i < 3000; ++i) {
    if (i) text += ",\n";
    if (i == 40)
      text +=
          R"({"ph": "X", "cat": "kernel", "ts": 1 "dur": 2})"; // passes the splitter, not simdjson
    else
      text += R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": )" +
              std::to_string(i) + R"(, "dur": 1})";
  }
  text += "]}";
  for (size_t inFlight : {2, 3, 8}) {
    KinetoImportOptions o;
    o.batch_bytes = 256;
    o.batches_in_flight = inFlight;
    const auto r = importKinetoBuffer(text, "big.json", o);
    CHECK(r.error.find("big.json: malformed JSON in traceEvents near byte") == 0);
    CHECK(r.trace.processes.empty());
  }
}
