// GPU clock to host clock (issue 5, part 2): one timeline. CUPTI normally stamps records with our
// clock through the timestamp callback (tested in cupti_collector_test); when it refuses, its own
// clock is mapped onto ours. These tests drive that mapping with a CUPTI clock that is offset and
// drifts, and check that decoded records land where they happened on the host's timeline.
#include "profiler/clock/clock.h"
#include "profiler/cupti/activity_builders.h"
#include "profiler/cupti/activity_decoder.h"
#include "profiler/cupti/cupti_collector.h"
#include "profiler/cupti/fake_cupti_port.h"
#include "profiler/cupti/timestamp_mapper.h"

#include <catch2/catch.hpp>

#include <cupti_runtime_cbid.h>

#include <atomic>
#include <cstdlib>

using namespace gpuwise;
using namespace gpuwise::profiler;

namespace {
// What start() said: what is being collected, or why nothing is.
std::string startText(const Expected<std::string>& r) {
  return r ? *r : r.error().message;
}

// A host clock the test steps: every read advances it 500 ns (a tight bracket).
std::atomic<int64_t> g_host{1'000'000'000};
uint64_t steppedHost() {
  return uint64_t(g_host.fetch_add(500) + 500);
}

} // namespace

TEST_CASE("The mapper measures offset and drift between CUPTI's clock and the host's") {
  const int64_t offset = 1'700'000'000'000'000'000; // CUPTI's clock: wall-clock-like epoch
  const double rate = 1.0 + 2e-4;                   // and 200 ppm fast
  auto cupti = [&](int64_t host) { return uint64_t(int64_t(double(host) * rate) + offset); };
  TimestampMapper m;
  CHECK(m.toHost(0) == 0);
  CHECK(m.toHost(12345) == 12345); // identity before any sample
  // Samples every 50 ms over 1 s, host bracket 1 us.
  for (int64_t h = 5'000'000'000; h <= 6'000'000'000; h += 50'000'000)
    REQUIRE(m.addSample(h - 500, cupti(h), h + 500));
  CHECK(m.slope() == Approx(1.0 / rate).epsilon(1e-7));
  // Times inside and a little past the sampled span map back to where they happened.
  for (int64_t h : {int64_t(5'000'000'000), int64_t(5'555'555'555), int64_t(6'000'000'000),
                    int64_t(6'100'000'000)}) {
    INFO(h);
    CHECK(std::llabs(m.toHost(cupti(h)) - h) < 200);
  }
  CHECK(m.toHost(0) == 0); // CUPTI's "unknown" stays unknown
  // A preempted read (bracket 1 ms) and a clock going backwards are rejected, the line kept.
  CHECK_FALSE(m.addSample(7'000'000'000, cupti(7'000'500'000), 7'001'000'000));
  CHECK_FALSE(m.addSample(6'500'000'000, cupti(5'000'000'000), 6'500'000'500));
  CHECK(m.rejected() == 2);
  CHECK(std::llabs(m.toHost(cupti(6'050'000'000)) - 6'050'000'000) < 200);
}

TEST_CASE("Drift is bounded: a wild sample pair cannot stretch the timeline") {
  TimestampMapper m;
  REQUIRE(m.addSample(0, 1'000'000'000, 1000));
  REQUIRE(m.addSample(100'000'000, 1'000'000'000 + 50'000'000, 100'001'000)); // 2x: impossible
  CHECK(m.slope() == Approx(1.0 + TimestampMapper::kMaxDrift));
}

TEST_CASE("Timestamp callback refused: records in CUPTI's clock are decoded onto the host's") {
  FakeCuptiPort port;
  port.timestamp_result_ = CUPTI_ERROR_NOT_SUPPORTED;
  port.host_clock_ = steppedHost;
  port.cupti_offset_ = 1'700'000'000'000'000'000;
  port.cupti_rate_ = 1.0 - 5e-5;
  CuptiCollector::Options o;
  o.buffer_bytes = 1 << 14;
  o.buffer_count = 4;
  CuptiCollector c(port, o);
  auto r = c.start(steppedHost);
  INFO(startText(r));
  REQUIRE(r.has_value());
  CHECK(startText(r).find("CUPTI's clock mapped onto the host's") != std::string::npos);
  CHECK(startText(r).find("CUPTI_ERROR_NOT_SUPPORTED") != std::string::npos);
  REQUIRE(c.hostMapping());
  CHECK(c.hostMapping()->calibrated());

  model::NameTable names;
  ActivityDecoder decoder(port, names);
  decoder.setTimestampMapper(c.hostMapping());
  DecodedActivity out;
  // 40 cycles of 25 ms: each the drain samples the clocks (flush), then decodes one launch whose
  // host call and GPU execution are given in host time and recorded in CUPTI's.
  std::vector<int64_t> gpu_start;
  for (uint32_t i = 0; i < 40; ++i) {
    g_host.fetch_add(25'000'000);
    const int64_t call = g_host.load() - 2'000'000; // the call happened 2 ms ago
    port.add(build::api(true, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, i + 1, 9,
                        port.cuptiTime(call), port.cuptiTime(call + 4000)));
    build::KernelArgs k;
    k.correlation = i + 1;
    k.start = port.cuptiTime(call + 30000);
    k.end = port.cuptiTime(call + 80000);
    port.add(build::kernel(k));
    gpu_start.push_back(call + 30000);
    c.flush(false);
    c.consume([&](uint8_t* buf, size_t valid) { decoder.decode(buf, valid, 0, out); });
  }
  REQUIRE(out.kernels.size() == 40);
  CHECK(c.hostMapping()->samples() >= 40);
  for (size_t i = 0; i < out.kernels.size(); ++i) {
    const auto& k = out.kernels[i];
    INFO("kernel " << i);
    // Within a microsecond of where it ran, on the host's timeline (the first cycles' slope is
    // still assumed 1, hence the looser bound for them).
    CHECK(std::llabs(k.start - gpu_start[i]) < (i < 2 ? 20000 : 1000));
    CHECK(std::llabs((k.end - k.start) - 50000) < 50);
    CHECK(std::llabs(k.start - k.launch_end - 26000) < 50); // launch-to-start latency kept
    CHECK(k.launch_start > 0);
  }
  c.stop();
}

TEST_CASE("Timestamp callback refused and no CUPTI clock: the interposer tier, saying why") {
  FakeCuptiPort port;
  port.timestamp_result_ = CUPTI_ERROR_NOT_SUPPORTED;
  port.get_timestamp_result_ = CUPTI_ERROR_NOT_INITIALIZED;
  CuptiCollector c(port, CuptiCollector::Options{});
  auto r = c.start(steppedHost);
  CHECK_FALSE(r.has_value());
  CHECK(startText(r).find("cuptiActivityRegisterTimestampCallback") != std::string::npos);
  CHECK(startText(r).find("cuptiGetTimestamp unusable") != std::string::npos);
  CHECK_FALSE(c.hostMapping());
  CHECK_FALSE(port.subscribed_);
}

TEST_CASE("CUPTI's clock mapped through the real host clock stays within microseconds") {
  // The shim's own clock (counter-based where usable) against a CUPTI clock on CLOCK_MONOTONIC
  // with an epoch offset: the mapped time of "now" in CUPTI's clock is the host's now.
  Clock& clock = initProcessClock(true);
  FakeCuptiPort port;
  port.cupti_offset_ = 1'700'000'000'000'000'000;
  TimestampMapper m(200000);
  int good = 0;
  for (int i = 0; i < 200 && good < 20; ++i) {
    int64_t before = clock.nowNs();
    uint64_t t = 0;
    REQUIRE(port.getTimestamp(&t) == CUPTI_SUCCESS);
    int64_t after = clock.nowNs();
    good += m.addSample(before, t, after);
  }
  REQUIRE(good >= 5);
  int64_t before = clock.nowNs();
  uint64_t t = 0;
  REQUIRE(port.getTimestamp(&t) == CUPTI_SUCCESS);
  int64_t after = clock.nowNs();
  int64_t mapped = m.toHost(t);
  INFO("bracket [" << before << ", " << after << "], mapped " << mapped);
  CHECK(mapped >= before - 50000);
  CHECK(mapped <= after + 50000);
}
