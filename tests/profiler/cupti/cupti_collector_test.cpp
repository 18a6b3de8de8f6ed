// The collector against the FakeCuptiPort (what it enables, how it falls back) and against the real
// libcupti where one is installed (it must fall back cleanly on a machine without a driver).
#include "profiler/clock/tick.h"
#include "profiler/cupti/activity_builders.h"
#include "profiler/cupti/activity_decoder.h"
#include "profiler/cupti/cupti_collector.h"
#include "profiler/cupti/dl_cupti_port.h"
#include "profiler/cupti/fake_cupti_port.h"
#include "tests/skip_test.h"

#include <catch2/catch.hpp>

#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>

using namespace gpuwise;
using namespace gpuwise::profiler;

namespace {
// What start() said: what is being collected, or why nothing is.
std::string startText(const Expected<std::string>& r) {
  return r ? *r : r.error().message;
}
uint64_t fixedTimestamp() {
  return 123456789;
}
CuptiCollector::Options smallPool(size_t count = 4) {
  CuptiCollector::Options o;
  o.buffer_bytes = 4096;
  o.buffer_count = count;
  return o;
}
} // namespace

TEST_CASE("The collector subscribes, stamps on our clock and enables the activity it needs") {
  FakeCuptiPort port;
  CuptiCollector c(port, smallPool());
  auto r = c.start(fixedTimestamp);
  REQUIRE(r.has_value());
  CHECK(startText(r) ==
        "CUPTI activity: kernels, copies, memsets, syncs, memory, NVTX, CUPTI overhead");
  CHECK(port.subscribed_);
  REQUIRE(port.timestamp_);
  CHECK(port.timestamp_() == 123456789);
  CHECK(c.hostMapping() == nullptr); // records arrive on our clock: nothing to map
  CHECK(port.thread_id_type_ == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
  CHECK(port.requested_);
  CHECK(port.completed_);
  std::set<CUpti_ActivityKind> want = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                       CUPTI_ACTIVITY_KIND_MEMCPY,
                                       CUPTI_ACTIVITY_KIND_MEMSET,
                                       CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
                                       CUPTI_ACTIVITY_KIND_MEMORY2,
                                       CUPTI_ACTIVITY_KIND_MARKER,
                                       CUPTI_ACTIVITY_KIND_OVERHEAD};
  CHECK(port.enabled_kinds_ == want);
  // API activity only for the cbids that launch, copy, set and synchronise: never everything.
  CHECK(port.runtime_cbids_.count(CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000));
  CHECK(port.runtime_cbids_.count(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
  CHECK(port.runtime_cbids_.count(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020));
  CHECK(port.runtime_cbids_.count(CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020));
  CHECK_FALSE(port.runtime_cbids_.count(CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020));
  CHECK(port.driver_cbids_.count(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));
  CHECK(port.driver_cbids_.count(CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2));
  CHECK(c.covers(ApiClass::Launch));
  CHECK(c.covers(ApiClass::Copy));
  CHECK(c.covers(ApiClass::Memset));
  CHECK(c.covers(ApiClass::Sync));
  CHECK_FALSE(c.covers(ApiClass::Other));
  c.flush(false);
  c.flush(true);
  CHECK(port.flushes_ == 2);
  CHECK(port.forced_flushes_ == 1);
  c.stop();
  CHECK_FALSE(port.subscribed_);
  CHECK(port.enabled_kinds_.empty());
}

TEST_CASE("Another subscriber holding CUPTI sends us to the interposer tier, saying why") {
  FakeCuptiPort port;
  port.subscribe_result_ = CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  CuptiCollector c(port, smallPool());
  auto r = c.start(fixedTimestamp);
  CHECK_FALSE(r.has_value());
  CHECK(startText(r).find("another subscriber") != std::string::npos);
  CHECK(startText(r).find("MULTIPLE_SUBSCRIBERS") != std::string::npos);
  CHECK_FALSE(c.active());
  CHECK_FALSE(c.covers(ApiClass::Launch));
  CHECK(port.enabled_kinds_.empty());
  CHECK(port.runtime_cbids_.empty());

  // When CUPTI names the holder (cuptiSubscribe_v2 tells the second subscriber), so do we.
  port.holder_ = "CUPTI for Nsight Systems";
  CuptiCollector again(port, smallPool());
  CHECK(again.start(fixedTimestamp)
            .error()
            .message.rfind(
                "CUPTI held by another subscriber, \"CUPTI for Nsight Systems\": cuptiSubscribe "
                "returned ",
                0) == 0);
}

TEST_CASE("A second collector in the same process finds CUPTI taken") {
  FakeCuptiPort port;
  CuptiCollector first(port, smallPool());
  REQUIRE(first.start(fixedTimestamp).has_value());
  CuptiCollector second(port, smallPool());
  auto r = second.start(fixedTimestamp);
  CHECK_FALSE(r.has_value());
  CHECK(startText(r).find("another subscriber") != std::string::npos);
  first.stop();
}

TEST_CASE("No driver, no library, or a refused kind: each has its own reason and undoes itself") {
  SECTION("not initialised") {
    FakeCuptiPort port;
    port.subscribe_result_ = CUPTI_ERROR_NOT_INITIALIZED;
    CuptiCollector c(port, smallPool());
    auto r = c.start(fixedTimestamp);
    CHECK_FALSE(r.has_value());
    CHECK(startText(r).find("driver") != std::string::npos);
  }
  SECTION("library missing") {
    FakeCuptiPort port;
    port.available_ = false;
    port.why_unavailable_ = "libcupti.so.13 not loadable: no such file";
    CuptiCollector c(port, smallPool());
    auto r = c.start(fixedTimestamp);
    CHECK_FALSE(r.has_value());
    CHECK(startText(r) == "CUPTI unavailable: libcupti.so.13 not loadable: no such file");
    CHECK(port.subscribe_calls_ == 0);
  }
  SECTION("timestamp callback refused, CUPTI's clock unreadable too") {
    FakeCuptiPort port;
    port.timestamp_result_ = CUPTI_ERROR_NOT_COMPATIBLE;
    port.get_timestamp_result_ = CUPTI_ERROR_NOT_INITIALIZED;
    CuptiCollector c(port, smallPool());
    auto r = c.start(fixedTimestamp);
    CHECK_FALSE(r.has_value());
    CHECK(startText(r).find("cuptiActivityRegisterTimestampCallback") != std::string::npos);
    CHECK_FALSE(port.subscribed_);
  }
  SECTION("timestamp callback refused: CUPTI's clock is mapped instead (timestamp_mapper_test)") {
    FakeCuptiPort port;
    port.timestamp_result_ = CUPTI_ERROR_NOT_COMPATIBLE;
    CuptiCollector c(port, smallPool());
    auto r = c.start(+[]() -> uint64_t { return monotonicNs(); });
    CHECK(r.has_value());
    CHECK(c.hostMapping() != nullptr);
    c.stop();
  }
  SECTION("kernels refused") {
    FakeCuptiPort port;
    port.enable_results_[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL] =
        CUPTI_ERROR_INSUFFICIENT_PRIVILEGES;
    CuptiCollector c(port, smallPool());
    auto r = c.start(fixedTimestamp);
    CHECK_FALSE(r.has_value());
    CHECK(startText(r).find("CONCURRENT_KERNEL") != std::string::npos);
    CHECK(startText(r).find("INSUFFICIENT_PRIVILEGES") != std::string::npos);
    CHECK_FALSE(port.subscribed_);
    CHECK(port.unsubscribe_calls_ == 1);
  }
  SECTION("copies refused: kernels still collected, copy hooks stay authoritative") {
    FakeCuptiPort port;
    port.enable_results_[CUPTI_ACTIVITY_KIND_MEMCPY] = CUPTI_ERROR_NOT_COMPATIBLE;
    CuptiCollector c(port, smallPool());
    auto r = c.start(fixedTimestamp);
    CHECK(r.has_value());
    CHECK(startText(r).find("copies") == std::string::npos);
    CHECK(c.covers(ApiClass::Launch));
    CHECK_FALSE(c.covers(ApiClass::Copy));
    CHECK_FALSE(port.runtime_cbids_.count(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020));
    c.stop();
  }
}

TEST_CASE("Buffers flow from CUPTI's callbacks to the decoder; an exhausted pool drops, counted") {
  FakeCuptiPort port;
  CuptiCollector c(port, smallPool(2)); // two 4 KiB buffers
  REQUIRE(c.start(fixedTimestamp).has_value());
  model::NameTable names;
  ActivityDecoder decoder(port, names);
  DecodedActivity out;
  auto consume = [&] {
    return c.consume([&](uint8_t* buf, size_t valid) { decoder.decode(buf, valid, 0, out); });
  };

  port.add(build::api(true, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, 1, 5, 10, 20));
  build::KernelArgs k;
  k.correlation = 1;
  k.name = "k";
  port.add(build::kernel(k));
  c.flush(false); // the fake delivers staged records on flush, as CUPTI does
  CHECK(consume() == 1);
  REQUIRE(out.kernels.size() == 1);
  CHECK(out.kernels[0].thread == 5);

  // Each Kernel10 is ~200 bytes: 40 of them need more than two 4 KiB buffers. Nothing is consumed
  // in between, so the pool runs dry and the rest are dropped and counted.
  for (uint32_t i = 0; i < 60; ++i) {
    k.correlation = 100 + i;
    port.add(build::kernel(k));
  }
  c.flush(false);
  uint64_t dropped = c.takeDroppedRecords();
  CHECK(dropped > 0);
  CHECK(c.poolExhausted() == 1);
  out.clear();
  CHECK(consume() == 2);
  CHECK(out.kernels.size() + decoder.heldRecords() + dropped == 60);
  CHECK(c.takeDroppedRecords() == 0); // reported once
  // Buffers are free again after consume.
  port.add(build::kernel(k));
  c.flush(false);
  CHECK(consume() == 1);
  c.stop();
}

TEST_CASE("A missing libcupti: the port says why, the collector stays off") {
  DlCuptiPort port("libgpuwise-no-such-cupti.so");
  CHECK_FALSE(port.available());
  CHECK(std::string(port.whyUnavailable()).find("libgpuwise-no-such-cupti.so") !=
        std::string::npos);
  CHECK(port.subscribe(nullptr, nullptr, nullptr) == CUPTI_ERROR_NOT_INITIALIZED);
  CuptiCollector c(port, smallPool());
  auto r = c.start(fixedTimestamp);
  CHECK_FALSE(r.has_value());
  CHECK(startText(r).rfind("CUPTI unavailable:", 0) == 0);
}

// Runs as cupti_collector_libcupti_test, reported Skipped where libcupti is not installed.
TEST_CASE("The installed libcupti loads through the port, or says why not", "[.libcupti]") {
  DlCuptiPort port;
  if (!port.available())
    gpuwise::test::skipTest(std::string("libcupti.so.13 is not installed here: ") +
                            port.whyUnavailable());
  CuptiCollector c(port, smallPool());
  auto r = c.start(fixedTimestamp);
  // Without a GPU driver the real CUPTI refuses to subscribe; on a GPU machine (or the simulated
  // device) it starts. Either way the answer is a value, never a crash, and says what it is.
  INFO(startText(r));
  CHECK_FALSE(startText(r).empty());
  if (r) c.stop();
}

// Part 5 of issue 5: whichever step another tool (torch.profiler, Nsight Systems, ncu) or the
// system refuses, gpuwise gives CUPTI back untouched, stays on the interposer tier and says why.
TEST_CASE("Every refusal on the way in leaves CUPTI as it was and names the call and the cause") {
  struct Case {
    const char* what;
    CUptiResult subscribe = CUPTI_SUCCESS, callbacks = CUPTI_SUCCESS, kernels = CUPTI_SUCCESS;
    const char* call;
    const char* cause;
  };
  const Case cases[] = {
      {"subscriber taken", CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, CUPTI_SUCCESS,
       CUPTI_SUCCESS, "cuptiSubscribe", "another subscriber"},
      {"buffer callbacks taken", CUPTI_SUCCESS, CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED,
       CUPTI_SUCCESS, "cuptiActivityRegisterCallbacks", "another subscriber"},
      {"kernel activity taken", CUPTI_SUCCESS, CUPTI_SUCCESS,
       CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, "cuptiActivityEnable(CONCURRENT_KERNEL)",
       "another subscriber"},
      {"no driver", CUPTI_ERROR_NOT_INITIALIZED, CUPTI_SUCCESS, CUPTI_SUCCESS, "cuptiSubscribe",
       "no usable driver"},
      {"profiling restricted to admins", CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, CUPTI_SUCCESS,
       CUPTI_SUCCESS, "cuptiSubscribe", "privileges"},
      {"kernels refused, privileges", CUPTI_SUCCESS, CUPTI_SUCCESS,
       CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, "cuptiActivityEnable(CONCURRENT_KERNEL)", "privileges"},
      {"incompatible tool attached", CUPTI_SUCCESS, CUPTI_SUCCESS, CUPTI_ERROR_NOT_COMPATIBLE,
       "cuptiActivityEnable(CONCURRENT_KERNEL)", "not compatible"},
      {"virtual GPU", CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED, CUPTI_SUCCESS, CUPTI_SUCCESS,
       "cuptiSubscribe", "virtualised"},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    FakeCuptiPort port;
    port.subscribe_result_ = c.subscribe;
    port.register_callbacks_result_ = c.callbacks;
    port.enable_results_[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL] = c.kernels;
    CuptiCollector col(port, smallPool());
    auto r = col.start(fixedTimestamp);
    INFO(startText(r));
    CHECK_FALSE(r.has_value());
    CHECK_FALSE(col.active());
    CHECK(startText(r).find(c.call) != std::string::npos);
    CHECK(startText(r).find(c.cause) != std::string::npos);
    CHECK(startText(r).find("CUPTI_ERROR_") != std::string::npos);
    // Nothing of ours is left behind in CUPTI.
    CHECK_FALSE(port.subscribed_);
    CHECK(port.enabled_kinds_.empty());
    CHECK(port.runtime_cbids_.empty());
    CHECK(port.driver_cbids_.empty());
    for (int cls = 0; cls < kApiClassCount; ++cls)
      CHECK_FALSE(col.covers(ApiClass(cls)));
  }
}

TEST_CASE("Optional kinds refused (NVTX, overhead) keep the CUPTI tier without them") {
  FakeCuptiPort port;
  port.enable_results_[CUPTI_ACTIVITY_KIND_MARKER] = CUPTI_ERROR_NOT_COMPATIBLE;
  port.enable_results_[CUPTI_ACTIVITY_KIND_OVERHEAD] = CUPTI_ERROR_INVALID_KIND;
  CuptiCollector c(port, smallPool());
  auto r = c.start(fixedTimestamp);
  REQUIRE(r.has_value());
  CHECK(startText(r) == "CUPTI activity: kernels, copies, memsets, syncs, memory");
  CHECK(c.covers(ApiClass::Launch));
  CHECK_FALSE(port.enabled_kinds_.count(CUPTI_ACTIVITY_KIND_MARKER));
  c.stop();

  FakeCuptiPort off;
  CuptiCollector::Options o = smallPool();
  o.nvtx = false;
  o.overhead = false;
  CuptiCollector c2(off, o);
  REQUIRE(c2.start(fixedTimestamp).has_value());
  CHECK_FALSE(off.enabled_kinds_.count(CUPTI_ACTIVITY_KIND_MARKER));
  CHECK_FALSE(off.enabled_kinds_.count(CUPTI_ACTIVITY_KIND_OVERHEAD));
  c2.stop();
}

TEST_CASE("Every kind flows from CUPTI's buffers through the collector into one decode") {
  FakeCuptiPort port;
  CuptiCollector c(port, smallPool(8));
  REQUIRE(c.start(fixedTimestamp).has_value());
  model::NameTable names;
  ActivityDecoder decoder(port, names);
  DecodedActivity out;
  // One training step as CUPTI would record it: an NVTX step range around a graph launch of two
  // kernels, a pageable H2D copy, a managed allocation, a stream sync, CUPTI's own flush cost.
  port.add(build::marker(1, CUPTI_ACTIVITY_FLAG_MARKER_START, 1000, "train_step 4", 31));
  port.add(build::api(true, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, 10, 31, 1100, 1200));
  port.add(build::memcpy(10, 1300, 1800, 1 << 20, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD,
                         CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
                         true));
  port.add(build::api(true, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, 11, 31, 1900, 1950));
  for (uint64_t node = 1; node <= 2; ++node) {
    build::KernelArgs k;
    k.correlation = 11;
    k.start = 2000 + node * 1000;
    k.end = k.start + 900;
    k.name = "_Z6kernelv";
    k.graph_id = 3;
    k.graph_node_id = node;
    port.add(build::kernel(k));
  }
  port.add(build::memory(12, 2100, 0x1000000, 1 << 22, CUPTI_ACTIVITY_MEMORY_KIND_MANAGED, false));
  port.add(
      build::api(true, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, 13, 31, 2200, 5000));
  port.add(
      build::sync(13, 2210, 4990, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, 1, 7));
  port.add(build::marker(1, CUPTI_ACTIVITY_FLAG_MARKER_END, 5100, nullptr, 31));
  port.add(build::overhead(CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH, 6000, 6400));
  c.flush(false);
  CHECK(c.consume([&](uint8_t* buf, size_t valid) { decoder.decode(buf, valid, 0, out); }) >= 1);
  CHECK(c.takeDroppedRecords() == 0);

  REQUIRE(out.kernels.size() == 2);
  CHECK(out.kernels[0].graph_node_id == 1);
  CHECK(out.kernels[1].graph_node_id == 2);
  CHECK(out.kernels[1].launch_start == 1900);
  REQUIRE(out.copies.size() == 1);
  CHECK(out.copies[0].src == model::MemoryKind::Pageable);
  REQUIRE(out.allocations.size() == 1);
  CHECK(out.allocations[0].kind == model::MemoryKind::Managed);
  REQUIRE(out.syncs.size() == 1);
  CHECK(out.syncs[0].thread == 31);
  REQUIRE(out.ranges.size() == 1);
  CHECK(out.ranges[0].kind == model::RangeKind::Step);
  CHECK(out.ranges[0].step == 4);
  CHECK(out.ranges[0].end - out.ranges[0].start == 4100);
  CHECK(out.cupti_overhead_ns == 400);
  CHECK(decoder.stats().graph_launches == 1);
  CHECK(decoder.stats().ignored == 0);
  CHECK(decoder.stats().bad_buffers == 0);
  c.stop();
}
