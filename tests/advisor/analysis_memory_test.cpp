// The memory analyzer's peak and the utilisation analyzer's memory curve come from one allocation
// replay: on the same records they report the same highest level, also when some records have
// no time (time 0, the model's "unknown").
#include "advisor/analysis/memory_analyzer.h"
#include "advisor/analysis/utilization_analyzer.h"
#include "tests/advisor/trace_builder.h"

#include <catch2/catch.hpp>

using namespace gpuwise;
using namespace gpuwise::advisor;
using namespace gpuwise::advisor::test;
using model::MemoryKind;

namespace {

model::Allocation alloc(model::TimeNs time, uint64_t address, uint64_t bytes) {
  return {
      .time = time, .address = address, .bytes = bytes, .device = 0, .kind = MemoryKind::Device};
}

model::Allocation release(model::TimeNs time, uint64_t address) {
  auto a = alloc(time, address, 0);
  a.is_free = true;
  return a;
}

} // namespace

TEST_CASE("memory: the peak and the curve's highest level agree when a record has no time") {
  auto p = process(1);
  p.allocations = {
      alloc(10, 0xa, 1000),
      alloc(0, 0xb, 5000), // held at an unknown time: no place in the running sum
      release(20, 0xa),
      alloc(30, 0xc, 300),
      release(0, 0xc), // freed at an unknown time: neither
      alloc(40, 0xd, 400),
  };
  const auto t = trace(p);
  const auto memory = analyzeMemory(t);
  const auto curve = analyzeUtilization(t);
  REQUIRE(memory.devices.size() == 1);
  REQUIRE(curve.memory.size() == 1);
  CHECK(memory.devices[0].source == MemorySource::Allocations);
  CHECK(curve.memory[0].source == MemorySource::Allocations);
  CHECK(memory.devices[0].peak_bytes == 1000); // 1000, then 0, 300, 700
  CHECK(curve.memory[0].peak() == memory.devices[0].peak_bytes);
  CHECK(curve.memory[0].start == 10); // the curve starts at the first timed record
  CHECK(curve.memory[0].end == 40);
}

TEST_CASE("memory: only untimed allocations leave the peak and the curve unknown") {
  auto p = process(2);
  p.allocations = {alloc(0, 0xa, 1000), release(0, 0xa)};
  const auto t = trace(p);
  CHECK_FALSE(analyzeMemory(t).peakBytes().has_value());
  CHECK(analyzeUtilization(t).memory.empty());
}
