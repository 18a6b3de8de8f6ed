#include "profiler/model/name_table.h"
#include "profiler/model/trace.h"

#include <catch2/catch.hpp>

using namespace gpuwise::model;

TEST_CASE("NameTable interns once and keeps id 0 empty") {
  NameTable t;
  CHECK(t.intern("") == 0);
  auto a = t.intern("sgemm_128x64");
  auto b = t.intern("ampere_bf16_s16816gemm");
  CHECK(a == 1);
  CHECK(b == 2);
  CHECK(t.intern("sgemm_128x64") == a);
  CHECK(t.get(a) == "sgemm_128x64");
  CHECK(t.get(99).empty());
  CHECK(t.find("nope") == 0);
}

TEST_CASE("NameTable assign mirrors a sender's ids and rejects bad ones") {
  NameTable t;
  CHECK(t.assign(5, "k5"));
  CHECK(t.size() == 6);
  CHECK(t.get(5) == "k5");
  CHECK(t.get(3).empty());
  CHECK(t.find("k5") == 5);
  CHECK(t.assign(5, "k5b"));
  CHECK(t.find("k5") == 0);
  CHECK(t.find("k5b") == 5);
  CHECK_FALSE(t.assign(0, "x"));
  CHECK_FALSE(t.assign(NameTable::kMaxNames + 1, "x"));
}

TEST_CASE("ProcessTrace sorts by time and counts events") {
  ProcessTrace p;
  p.kernels.push_back({.start = 30, .end = 40});
  p.kernels.push_back({.start = 10, .end = 20});
  p.allocations.push_back({.time = 9});
  p.allocations.push_back({.time = 3});
  p.sortByTime();
  CHECK(p.kernels[0].start == 10);
  CHECK(p.allocations[0].time == 3);
  CHECK(p.eventCount() == 4);
  CHECK(std::string(toString(CopyDirection::HostToDevice)) == "h2d");
}
