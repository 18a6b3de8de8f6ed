// The activity kinds beyond plain kernels and copies, decoded from hand-built CUPTI 13 records
// through the port: graph-node kernels and graph launches, NVTX ranges and markers, CUPTI's own
// overhead, launch-to-start latency, managed-memory copies.
#include "profiler/cupti/activity_builders.h"
#include "profiler/cupti/activity_decoder.h"
#include "profiler/cupti/fake_cupti_port.h"
#include "tests/profiler/cupti/record_buffer.h"

#include <catch2/catch.hpp>

#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>

#include <vector>

using namespace gpuwise;
using namespace gpuwise::profiler;

namespace {

using Buffer = test::RecordBuffer;

constexpr uint32_t kStart = CUPTI_ACTIVITY_FLAG_MARKER_START;
constexpr uint32_t kEnd = CUPTI_ACTIVITY_FLAG_MARKER_END;
constexpr uint32_t kInstant = CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS;

} // namespace

TEST_CASE("Graph-node kernels are attributed to their graph and node; graph launches counted") {
  Buffer b;
  model::NameTable names;
  ActivityDecoder d(b.port, names);
  // Two launches of graph 9 (three kernel nodes each); the runtime call and the driver call inside
  // it share the correlation id, so each launch counts once.
  for (uint32_t launch = 0; launch < 2; ++launch) {
    uint32_t corr = 70 + launch;
    uint64_t t0 = 10000 * (launch + 1);
    b.add(build::api(true, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, corr, 4, t0, t0 + 50));
    b.add(build::api(false, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, corr, 4, t0 + 10, t0 + 40));
    for (uint64_t node = 0; node < 3; ++node) {
      build::KernelArgs k;
      k.correlation = corr;
      k.start = t0 + 100 + node * 200;
      k.end = k.start + 150;
      k.name = node == 1 ? "_Z4gemmv" : "_Z4reluv";
      k.graph_id = 9;
      k.graph_node_id = 0x100000000ull + node; // node ids are 64-bit
      b.add(build::kernel(k));
    }
  }
  // A whole-graph record (GRAPH_TRACE, should another client have enabled it) is counted only.
  b.add(build::graphTrace(70, 9, 10100, 10650));
  // An ordinary launch is not a graph kernel.
  b.add(build::api(true, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, 80, 4, 30000, 30010));
  build::KernelArgs plain;
  plain.correlation = 80;
  plain.start = 30100;
  plain.end = 30200;
  b.add(build::kernel(plain));
  DecodedActivity out;
  b.decodeInto(d, out);

  REQUIRE(out.kernels.size() == 7);
  for (size_t i = 0; i < 6; ++i) {
    const auto& k = out.kernels[i];
    INFO("kernel " << i);
    CHECK(k.graph_id == 9);
    CHECK(k.graph_node_id == 0x100000000ull + i % 3);
    CHECK((k.flags & model::kKernelFromGraph) != 0);
    CHECK(k.correlation == 70 + i / 3);
    CHECK(k.launch_start == int64_t(10000 * (i / 3 + 1))); // the outer (runtime) call
    CHECK(k.thread == 4);
  }
  CHECK(names.get(out.kernels[1].name) == "_Z4gemmv");
  CHECK(out.kernels[6].graph_id == 0);
  CHECK(out.kernels[6].graph_node_id == 0);
  CHECK((out.kernels[6].flags & model::kKernelFromGraph) == 0);
  CHECK(d.stats().graph_launches == 2);
  CHECK(d.stats().graph_kernels == 6);
  CHECK(d.stats().graph_traces == 1);
  CHECK(d.stats().ignored == 0);
}

TEST_CASE("Launch-to-start latency per kernel comes from the joined API record") {
  Buffer b;
  model::NameTable names;
  ActivityDecoder d(b.port, names);
  // Three launches on one thread; the GPU starts them 5, 20 and 400 us after their calls return.
  const int64_t call_end[3] = {1000, 2000, 3000};
  const int64_t gpu_start[3] = {6000, 22000, 403000};
  for (uint32_t i = 0; i < 3; ++i) {
    b.add(build::api(true, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, i + 1, 12,
                     uint64_t(call_end[i] - 300), uint64_t(call_end[i])));
    build::KernelArgs k;
    k.correlation = i + 1;
    k.start = uint64_t(gpu_start[i]);
    k.end = k.start + 1000;
    b.add(build::kernel(k));
  }
  DecodedActivity out;
  b.decodeInto(d, out);
  REQUIRE(out.kernels.size() == 3);
  for (size_t i = 0; i < 3; ++i) {
    const auto& k = out.kernels[i];
    CHECK(k.launch_end == call_end[i]);
    CHECK(k.start - k.launch_end == gpu_start[i] - call_end[i]);
    CHECK(k.launch_end - k.launch_start == 300); // the host cost of the launch call itself
  }
}

TEST_CASE("Copies name both memory kinds, managed included; memory records keep address and size") {
  Buffer b;
  model::NameTable names;
  ActivityDecoder d(b.port, names);
  struct Case {
    CUpti_ActivityMemcpyKind copy;
    CUpti_ActivityMemoryKind src, dst;
    model::CopyDirection direction;
    model::MemoryKind want_src, want_dst;
  };
  using MK = model::MemoryKind;
  const Case cases[] = {
      {CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE,
       CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, model::CopyDirection::HostToDevice, MK::Pageable,
       MK::Device},
      {CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PINNED,
       CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, model::CopyDirection::HostToDevice, MK::Pinned,
       MK::Device},
      {CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
       CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE, model::CopyDirection::DeviceToHost, MK::Device,
       MK::Pageable},
      {CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE,
       CUPTI_ACTIVITY_MEMORY_KIND_MANAGED, model::CopyDirection::HostToDevice, MK::Pageable,
       MK::Managed},
      {CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, CUPTI_ACTIVITY_MEMORY_KIND_MANAGED,
       CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, model::CopyDirection::DeviceToDevice, MK::Managed,
       MK::Device},
      {CUPTI_ACTIVITY_MEMCPY_KIND_HTOA, CUPTI_ACTIVITY_MEMORY_KIND_PINNED,
       CUPTI_ACTIVITY_MEMORY_KIND_ARRAY, model::CopyDirection::HostToDevice, MK::Pinned, MK::Array},
      {CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC,
       CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC, model::CopyDirection::DeviceToDevice, MK::Device,
       MK::Managed},
  };
  uint32_t corr = 1;
  for (const Case& c : cases) {
    b.add(build::api(true, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, corr, 3, corr * 10,
                     corr * 10 + 5));
    b.add(
        build::memcpy(corr, corr * 100, corr * 100 + 50, 1024 * corr, c.copy, c.src, c.dst, true));
    ++corr;
  }
  b.add(build::memory(50, 5000, 0x7f00dead0000, 3 << 20, CUPTI_ACTIVITY_MEMORY_KIND_MANAGED, false,
                      2));
  DecodedActivity out;
  b.decodeInto(d, out);
  REQUIRE(out.copies.size() == std::size(cases));
  for (size_t i = 0; i < std::size(cases); ++i) {
    INFO("case " << i);
    CHECK(out.copies[i].direction == cases[i].direction);
    CHECK(out.copies[i].src == cases[i].want_src);
    CHECK(out.copies[i].dst == cases[i].want_dst);
    CHECK(out.copies[i].bytes == 1024 * (i + 1));
    CHECK(out.copies[i].thread == 3);
  }
  REQUIRE(out.allocations.size() == 1);
  CHECK(out.allocations[0].address == 0x7f00dead0000);
  CHECK(out.allocations[0].bytes == (3u << 20));
  CHECK(out.allocations[0].kind == model::MemoryKind::Managed);
  CHECK(out.allocations[0].device == 2);
}

TEST_CASE("NVTX range names: steps with their numbers, data loader, operators, annotations") {
  struct Case {
    const char* name;
    model::RangeKind kind;
    int64_t step;
  };
  using RK = model::RangeKind;
  const Case cases[] = {
      {"ProfilerStep#12", RK::Step, 12},
      {"step", RK::Step, -1},
      {"step 3", RK::Step, 3},
      {"Step_41", RK::Step, 41},
      {"train_step", RK::Step, -1},
      {"training_step#7", RK::Step, 7},
      {"iteration 100", RK::Step, 100},
      {"iter:5", RK::Step, 5},
      {"forward", RK::Annotation, -1},
      {"stepper", RK::Annotation, -1},
      {"optimizer.step", RK::Annotation, -1},
      {"enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", RK::DataLoader, -1},
      {"aten::addmm, seq = 12", RK::Operator, -1},
      {"", RK::Annotation, -1},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    int64_t step = 99;
    CHECK(nvtxRangeKind(c.name, &step) == c.kind);
    CHECK(step == c.step);
  }
}

TEST_CASE("NVTX push/pop and start/end ranges and markers become ranges; steps are steps") {
  Buffer b;
  model::NameTable names;
  ActivityDecoder d(b.port, names);
  // Thread 21: step 1 { forward { } } pushed and popped; thread 22: a start/end range that ends on
  // another thread (nvtxRangeStart/End may), and an instantaneous marker.
  b.add(build::marker(1, kStart, 1000, "step 1", 21));
  b.add(build::marker(2, kStart, 1100, "forward", 21));
  b.add(build::marker(3, kStart, 1150, "data prefetch", 22, "my_domain"));
  b.add(build::marker(2, kEnd, 1500, nullptr, 21));
  b.add(build::marker(4, kInstant, 1600, "checkpoint saved", 22));
  DecodedActivity out;
  b.decodeInto(d, out);
  REQUIRE(out.ranges.size() == 2); // forward, the marker; step 1 still open
  CHECK(d.openRanges() == 2);
  // The range ends in the next buffer, and on another thread.
  b.add(build::marker(1, kEnd, 2000, nullptr, 21));
  b.add(build::marker(3, kEnd, 2100, nullptr, 23));
  b.decodeInto(d, out);
  REQUIRE(out.ranges.size() == 4);
  CHECK(d.openRanges() == 0);

  const model::Range& fwd = out.ranges[0];
  CHECK(names.get(fwd.name) == "forward");
  CHECK(fwd.start == 1100);
  CHECK(fwd.end == 1500);
  CHECK(fwd.thread == 21);
  CHECK(fwd.kind == model::RangeKind::Annotation);
  const model::Range& mark = out.ranges[1];
  CHECK(names.get(mark.name) == "checkpoint saved");
  CHECK(mark.start == 1600);
  CHECK(mark.end == 1600);
  CHECK(mark.thread == 22);
  const model::Range& step = out.ranges[2];
  CHECK(names.get(step.name) == "step 1");
  CHECK(step.kind == model::RangeKind::Step);
  CHECK(step.step == 1);
  CHECK(step.start == 1000);
  CHECK(step.end == 2000);
  const model::Range& prefetch = out.ranges[3];
  CHECK(prefetch.thread == 22); // the thread that started it
  CHECK(prefetch.end == 2100);
  CHECK(d.stats().markers == 7);
  CHECK(out.recordCount() == 4);
}

TEST_CASE("emit_nvtx operator ranges are skipped by default; unmatched ends and the cap counted") {
  Buffer b;
  model::NameTable names;
  ActivityDecoder::Options o;
  o.max_open_ranges = 3;
  ActivityDecoder d(b.port, names, o);
  b.add(build::marker(1, kStart, 100, "aten::linear", 5));
  b.add(build::marker(2, kStart, 110, "aten::addmm, seq = 3", 5));
  b.add(build::marker(2, kEnd, 190, nullptr, 5));
  b.add(build::marker(1, kEnd, 200, nullptr, 5));
  b.add(build::marker(77, kEnd, 300, nullptr, 5)); // its start was never seen
  DecodedActivity out;
  b.decodeInto(d, out);
  CHECK(out.ranges.empty());
  CHECK(d.stats().operator_ranges == 2);
  CHECK(d.stats().ranges_unmatched == 1);
  CHECK(d.openRanges() == 0);
  // Five starts with no ends: the open table keeps the newest three.
  for (uint32_t id = 10; id < 15; ++id)
    b.add(build::marker(id, kStart, id * 10, "leaked", 5));
  b.decodeInto(d, out);
  CHECK(d.openRanges() == 3);
  CHECK(d.stats().ranges_unmatched == 3);
  b.add(build::marker(14, kEnd, 500, nullptr, 5));
  b.decodeInto(d, out);
  REQUIRE(out.ranges.size() == 1);
  CHECK(out.ranges[0].start == 140);

  ActivityDecoder::Options keep;
  keep.keep_operator_ranges = true;
  ActivityDecoder k(b.port, names, keep);
  b.add(build::marker(1, kStart, 100, "aten::linear", 5));
  b.add(build::marker(1, kEnd, 200, nullptr, 5));
  out.clear();
  b.decodeInto(k, out);
  REQUIRE(out.ranges.size() == 1);
  CHECK(out.ranges[0].kind == model::RangeKind::Operator);
}

TEST_CASE("CUPTI's overhead records are summed, per buffer and in total") {
  Buffer b;
  model::NameTable names;
  ActivityDecoder d(b.port, names);
  b.add(build::overhead(CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH, 1000, 1700));
  b.add(build::overhead(CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION, 2000, 2050));
  b.add(build::overhead(CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER, 3000, 3000)); // zero length
  DecodedActivity out;
  b.decodeInto(d, out);
  CHECK(out.cupti_overhead_ns == 750);
  CHECK(out.recordCount() == 0);
  b.add(build::overhead(CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST, 4000, 4100));
  out.clear();
  b.decodeInto(d, out);
  CHECK(out.cupti_overhead_ns == 100);
  CHECK(d.stats().overhead_records == 4);
  CHECK(d.stats().overhead_ns == 850);
  CHECK(d.stats().ignored == 0);
}
