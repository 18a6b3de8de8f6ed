// The importer on small traces written here, one feature at a time: both eras of the format,
// correlation joins, host syncs, memory, metadata, and the inputs it must refuse.
#include "advisor/import/kineto_collective.h"
#include "advisor/import/kineto_importer.h"
#include "tests/advisor/import/import_test_util.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>

using namespace gpuwise;
using namespace gpuwise::advisor;
using model::CopyDirection;
using model::MemoryKind;
using model::RangeKind;
using model::SyncKind;

namespace {

const model::ProcessTrace& only(const KinetoImportResult& r) {
  INFO(r.error);
  REQUIRE(r.ok());
  REQUIRE(r.trace.processes.size() == 1);
  return r.trace.processes[0];
}

KinetoImportResult importText(const std::string& text, KinetoImportOptions options = {}) {
  return importKinetoBuffer(text, "test.json", options);
}

// The 2021 layout (PyTorch 1.8/1.9, tb_plugin samples): capitalised categories, string tids,
// steps and data-loader waits recorded as operators, "[memory]" instants without a category.
const char* kEra2021 = R"JSON({
  "schemaVersion": 1,
  "deviceProperties": [{"id": 0, "name": "Tesla V100-DGXS-32GB", "totalGlobalMem": 34084028416,
    "computeMajor": 7, "computeMinor": 0, "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048,
    "regsPerBlock": 65536, "regsPerMultiprocessor": 65536, "warpSize": 32, "sharedMemPerBlock": 49152,
    "sharedMemPerMultiprocessor": 98304, "numSms": 80, "sharedMemPerBlockOptin": 98304},
    {"id": 1, "name": "Tesla V100-DGXS-32GB"}],
  "traceEvents": [
  {"ph": "X", "cat": "Operator", "name": "ProfilerStep#5", "pid": 25738, "tid": "25738",
   "ts": 1623142623460000, "dur": 100000, "args": {"Device": 25738, "External id": 1}},
  {"ph": "X", "cat": "Operator", "name": "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
   "pid": 25738, "tid": "25738", "ts": 1623142623460010, "dur": 50, "args": {"External id": 2}},
  {"ph": "X", "cat": "Operator", "name": "aten::empty", "pid": 25738, "tid": "25738",
   "ts": 1623142623460111, "dur": 25, "args": {"Device": 25738, "External id": 3, "Input Dims": [[], []]}},
  {"ph": "i", "s": "t", "name": "[memory]", "pid": 25738, "tid": 25738, "ts": 1623142623460121,
   "args": {"Device Type": 1, "Device Id": 0, "Bytes": 19267584}},
  {"ph": "i", "s": "t", "name": "[memory]", "pid": 25738, "tid": 25738, "ts": 1623142623460122,
   "args": {"Device Type": 0, "Device Id": -1, "Bytes": 16}},
  {"ph": "X", "cat": "Memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0, "tid": "stream 7",
   "ts": 1623142623529248, "dur": 1940, "args": {"device": 0, "context": 1, "stream": 7,
   "correlation": 34417, "external id": 537, "bytes": 19267584, "memory bandwidth (GB/s)": 9.927}},
  {"ph": "f", "id": 34417, "pid": 0, "tid": "stream 7", "ts": 1623142623529248, "cat": "async", "name": "launch", "bp": "e"},
  {"ph": "X", "cat": "Runtime", "name": "cudaMemcpyAsync", "pid": 25738, "tid": "25738",
   "ts": 1623142623529088, "dur": 2022, "args": {"cbid": 41, "correlation": 34417, "external id": 537}},
  {"ph": "s", "id": 34417, "pid": 25738, "tid": 25738, "ts": 1623142623529088, "cat": "async", "name": "launch"},
  {"ph": "X", "cat": "Runtime", "name": "cudaStreamSynchronize", "pid": 25738, "tid": "25738",
   "ts": 1623142623531111, "dur": 83, "args": {"cbid": 131, "correlation": 34418}},
  {"ph": "X", "cat": "Kernel", "name": "volta_scudnn_128x64_relu_medium_nn_v1", "pid": 0, "tid": "stream 7",
   "ts": 1623142623531639, "dur": 605, "args": {"queued": 0, "device": 0, "context": 1, "stream": 7,
   "correlation": 34442, "external id": 544, "registers per thread": 128, "shared memory": 16384,
   "blocks per SM": 39.2, "warps per SM": 156.8, "grid": [3136, 1, 1], "block": [128, 1, 1],
   "est. achieved occupancy %": 25}},
  {"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": 25738, "tid": "25738",
   "ts": 1623142623531598, "dur": 30, "args": {"cbid": 211, "correlation": 34442, "external id": 544}},
  {"ph": "X", "cat": "Memset", "name": "Memset (Device)", "pid": 0, "tid": "stream 7",
   "ts": 1623142623579729, "dur": 1, "args": {"device": 0, "context": 1, "stream": 7,
   "correlation": 38304, "bytes": 128000}},
  {"name": "process_name", "ph": "M", "ts": 1623142623460016, "pid": 25738, "tid": 0, "args": {"name": "python"}},
  {"name": "process_labels", "ph": "M", "ts": 1623142623460016, "pid": 25738, "tid": 0, "args": {"labels": "CPU"}},
  {"name": "process_name", "ph": "M", "ts": 1623142623460016, "pid": 0, "tid": 0, "args": {"name": "python"}},
  {"name": "thread_name", "ph": "M", "ts": 1623142623460016, "pid": 0, "tid": "stream 7", "args": {"name": "stream 7"}},
  {"ph": "X", "cat": "Trace", "ts": 1623142623460016, "dur": 1065723, "pid": "Traces", "tid": "PyTorch Profiler",
   "name": "PyTorch Profiler (0)", "args": {"Op count": 0}}

]})JSON";

// The current layout: lower-case categories, float timestamps with ns fractions, cuda_sync,
// annotations, memory totals, and metadata after traceEvents.
const char* kEraCurrent = R"JSON({
  "schemaVersion": 1,
  "distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 8},
  "traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#12", "pid": 1102, "tid": 1102,
   "ts": 1712195495505000.0, "dur": 20000.5, "args": {"External id": 1}},
  {"ph": "X", "cat": "user_annotation", "name": "## forward ##", "pid": 1102, "tid": 1102,
   "ts": 1712195495505100.0, "dur": 100.0, "args": {"External id": 2}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1102, "tid": 1102,
   "ts": 1712195495505200.0, "dur": 10.0, "args": {"External id": 3}},
  {"ph": "X", "cat": "python_function", "name": "torch/utils/data/dataloader.py(703): __next__", "pid": 1102,
   "tid": 1102, "ts": 1712195495505300.25, "dur": 40.5, "args": {"Python id": 9}},
  {"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", "pid": 0, "tid": 7,
   "ts": 1712195495505583.0, "dur": 4.928, "args": {"External id": 112, "device": 0, "stream": 7,
   "correlation": 135071, "registers per thread": 96, "shared memory": 0, "grid": [2, 1, 1], "block": [512, 1, 1]}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1102, "tid": 1103,
   "ts": 1712195495505543.2, "dur": 41.768, "args": {"External id": 112, "cbid": 211, "correlation": 135071}},
  {"ph": "X", "cat": "cuda_driver", "name": "cuLaunchKernel", "pid": 1102, "tid": 1103,
   "ts": 1712195495505600.0, "dur": 3.0, "args": {"correlation": 135072}},
  {"ph": "X", "cat": "kernel", "name": "triton_poi_fused_add_0", "pid": 0, "tid": 7,
   "ts": 1712195495505610.0, "dur": 2.0, "args": {"device": 0, "stream": 7, "correlation": 135072}},
  {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH (Device -> Pinned)", "pid": 0, "tid": 7,
   "ts": 1712195495506161.25, "dur": 1.28, "args": {"device": 0, "stream": 7, "correlation": 135139, "bytes": 256}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpy", "pid": 1102, "tid": 1102,
   "ts": 1712195495506150.0, "dur": 20.0, "args": {"correlation": 135139}},
  {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoD (Device -> Device)", "pid": 0, "tid": 7,
   "ts": 1712195495506200.0, "dur": 1.0, "args": {"device": 0, "stream": 7, "correlation": 135140, "bytes": 64}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpy", "pid": 1102, "tid": 1102,
   "ts": 1712195495506190.0, "dur": 15.0, "args": {"correlation": 135140}},
  {"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": 0, "tid": 7,
   "ts": 1712195495533164.2, "dur": 15.776, "args": {"device": 0, "stream": 7, "correlation": 139861, "bytes": 12845056}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaMemsetAsync", "pid": 1102, "tid": 1102,
   "ts": 1712195495533100.0, "dur": 5.0, "args": {"correlation": 139861}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "pid": 1102, "tid": 1102,
   "ts": 1712195495533200.0, "dur": 50.0, "args": {"correlation": 139900}},
  {"ph": "X", "cat": "cuda_sync", "name": "Stream Sync", "pid": 0, "tid": 7, "ts": 1712195495533201.0, "dur": 48.0,
   "args": {"cuda_sync_kind": "Stream Sync", "stream": 7, "correlation": 139900, "device": 0}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamWaitEvent", "pid": 1102, "tid": 1102,
   "ts": 1712195495533300.0, "dur": 2.0, "args": {"correlation": 139910}},
  {"ph": "X", "cat": "cuda_sync", "name": "Stream Wait Event", "pid": 0, "tid": 20, "ts": 1712195495533301.0,
   "dur": 0.0, "args": {"cuda_sync_kind": "Stream Wait Event", "stream": 20, "correlation": 139910, "device": 0}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaEventQuery", "pid": 1102, "tid": 1102,
   "ts": 1712195495533400.0, "dur": 2.0, "args": {"correlation": 139920}},
  {"ph": "X", "cat": "cuda_sync", "name": "Event Sync", "pid": 0, "tid": 7, "ts": 1712195495533400.5, "dur": 1.0,
   "args": {"cuda_sync_kind": "Event Sync", "stream": 7, "correlation": 139920, "device": 0}},
  {"ph": "X", "cat": "gpu_user_annotation", "name": "ProfilerStep#12", "pid": 0, "tid": 7,
   "ts": 1712195495505583.0, "dur": 30000.0, "args": {"External id": 1}},
  {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 1102, "tid": 1102,
   "ts": 1712195495505590.5, "args": {"Total Reserved": 2629828608, "Total Allocated": 1003059712,
   "Bytes": 18317312, "Addr": 137877174353920, "Device Id": 0, "Device Type": 1, "Ev Idx": 4187}},
  {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 1102, "tid": 1102,
   "ts": 1712195495505595.0, "args": {"Total Reserved": 2629828608, "Total Allocated": 984742400,
   "Bytes": -18317312, "Addr": 137877174353920, "Device Id": 0, "Device Type": 1}},
  {"name": "process_labels", "ph": "M", "ts": 0, "pid": 1102, "tid": 0, "args": {"labels": "CPU"}},
  {"name": "process_name", "ph": "M", "ts": 0, "pid": 1102, "tid": 0, "args": {"name": "python3.10"}}
  ],
  "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85029158912,
    "computeMajor": 9, "computeMinor": 0, "numSms": 132, "maxThreadsPerMultiprocessor": 2048,
    "regsPerMultiprocessor": 65536, "sharedMemPerMultiprocessor": 233472, "sharedMemPerBlockOptin": 232448,
    "warpSize": 32}],
  "host_name": "node-7"
})JSON";

} // namespace

TEST_CASE("2021 traces: capitalised categories, string tids, steps recorded as operators") {
  const auto r = importText(kEra2021);
  const auto& p = only(r);
  CHECK(r.trace.source.kind == model::SourceKind::Kineto);
  CHECK(r.trace.source.files == std::vector<std::string>{"test.json"});
  CHECK(p.info.pid == 25738);
  CHECK(p.info.command == "python");
  CHECK(p.info.tier == model::CollectionTier::Imported);

  REQUIRE(p.kernels.size() == 1);
  const auto& k = p.kernels[0];
  CHECK(p.names.get(k.name) == "volta_scudnn_128x64_relu_medium_nn_v1");
  CHECK(k.start == 1623142623531639000);
  CHECK(k.end == 1623142623532244000);
  CHECK(k.device == 0);
  CHECK(k.stream == 7);
  CHECK(k.correlation == 34442);
  CHECK(k.grid == model::Dim3{3136, 1, 1});
  CHECK(k.block == model::Dim3{128, 1, 1});
  CHECK(k.registers_per_thread == 128);
  CHECK(k.static_shared_bytes + k.dynamic_shared_bytes == 16384);
  CHECK(k.achieved_occupancy == Approx(0.25));
  CHECK(k.launch_start == 1623142623531598000); // joined to cudaLaunchKernel by correlation
  CHECK(k.launch_end == 1623142623531628000);
  CHECK(k.thread == 25738);
  CHECK(k.flags == 0);

  REQUIRE(p.copies.size() == 1);
  const auto& c = p.copies[0];
  CHECK(c.direction == CopyDirection::HostToDevice);
  CHECK(c.src == MemoryKind::Pageable);
  CHECK(c.dst == MemoryKind::Device);
  CHECK(c.bytes == 19267584);
  CHECK(c.call_start == 1623142623529088000);
  CHECK(c.call_end == 1623142623531110000);
  CHECK(c.async);
  CHECK(c.thread == 25738);

  REQUIRE(p.memsets.size() == 1);
  CHECK(p.memsets[0].bytes == 128000);
  CHECK(p.memsets[0].dst == MemoryKind::Device);
  CHECK(p.memsets[0].call_start == 0); // its runtime call is not in the trace

  CHECK(p.api_calls.size() == 3);
  REQUIRE(p.syncs.size() == 1);
  CHECK(p.syncs[0].kind == SyncKind::Stream);
  CHECK(p.syncs[0].start == 1623142623531111000);
  CHECK(p.syncs[0].end == 1623142623531194000);
  CHECK(p.syncs[0].thread == 25738);

  REQUIRE(p.ranges.size() == 2);
  CHECK(p.ranges[0].kind == RangeKind::Step);
  CHECK(p.ranges[0].step == 5);
  CHECK(p.ranges[0].end - p.ranges[0].start == 100000000);
  CHECK(p.ranges[1].kind == RangeKind::DataLoader);

  // Device memory only: the CPU allocator's events are not GPU allocations.
  REQUIRE(p.allocations.size() == 1);
  CHECK(p.allocations[0].bytes == 19267584);
  CHECK_FALSE(p.allocations[0].is_free);
  CHECK(p.allocations[0].kind == MemoryKind::Device);
  CHECK(p.memory_samples.empty());

  REQUIRE(p.devices.size() == 1); // device 1 is listed by Kineto but unused
  CHECK(p.devices[0].name == "Tesla V100-DGXS-32GB");
  CHECK(p.devices[0].sm_count == 80);
  CHECK(p.devices[0].compute_major == 7);
  CHECK(p.devices[0].memory_total_bytes == 34084028416ull);
  CHECK(p.devices[0].shared_memory_per_sm == 98304);
  CHECK(p.devices[0].warp_size == 32);
  CHECK(p.wall_start == 1623142623460000000);
  CHECK(p.wall_end == 1623142623460016000 + 1065723000);
}

TEST_CASE("current traces: cuda_sync, annotations, memory totals, metadata after traceEvents") {
  const auto r = importText(kEraCurrent);
  const auto& p = only(r);
  CHECK(p.info.pid == 1102);
  CHECK(p.info.command == "python3.10");
  CHECK(p.info.rank == 3);
  CHECK(p.info.world_size == 8);
  CHECK(p.info.host == "node-7");

  REQUIRE(p.kernels.size() == 2);
  CHECK(p.kernels[0].flags & model::kKernelCommunication);
  CHECK(p.kernels[0].start == 1712195495505583000);
  CHECK(p.kernels[0].end == 1712195495505587928);
  CHECK(p.kernels[0].launch_start == 1712195495505543200); // float ts, exact to the ns
  CHECK(p.kernels[0].launch_end == 1712195495505584968);
  CHECK(p.kernels[0].thread == 1103);
  CHECK(p.kernels[0].achieved_occupancy < 0);
  CHECK(p.kernels[1].launch_start == 1712195495505600000); // joined to the driver call

  REQUIRE(p.copies.size() == 2);
  CHECK(p.copies[0].direction == CopyDirection::DeviceToHost);
  CHECK(p.copies[0].dst == MemoryKind::Pinned);
  CHECK(p.copies[0].start == 1712195495506161250);
  CHECK_FALSE(p.copies[0].async);
  CHECK(p.copies[1].direction == CopyDirection::DeviceToDevice);
  REQUIRE(p.memsets.size() == 1);
  CHECK(p.memsets[0].async);

  // Host syncs: the sync copy (not the device-to-device one), the stream sync enriched with its
  // stream by the cuda_sync record, a device-side wait, and the event sync CUPTI saw in a query.
  REQUIRE(p.syncs.size() == 4);
  auto count = [&](SyncKind k) {
    return std::count_if(p.syncs.begin(), p.syncs.end(), [&](auto& s) { return s.kind == k; });
  };
  CHECK(count(SyncKind::SyncCopy) == 1);
  CHECK(count(SyncKind::Stream) == 1);
  CHECK(count(SyncKind::StreamWaitEvent) == 1);
  CHECK(count(SyncKind::Event) == 1);
  for (const auto& s : p.syncs) {
    if (s.kind == SyncKind::Stream) {
      CHECK(s.stream == 7);
      CHECK(s.start == 1712195495533200000); // the host call's time, not the CUPTI record's
      CHECK(s.end == 1712195495533250000);
    }
    if (s.kind == SyncKind::SyncCopy) {
      CHECK(s.correlation == 135139);
      CHECK(s.stream == 7);
    }
    if (s.kind == SyncKind::StreamWaitEvent) {
      CHECK(s.stream == 20);
      CHECK(s.thread == 1102); // from the cudaStreamWaitEvent call
    }
  }

  // Ranges: step, annotation, GPU annotation, and the Python dataloader frame (no
  // enumerate(DataLoader) range in this trace). cpu_op is skipped by default.
  std::map<RangeKind, int> kinds;
  for (const auto& r2 : p.ranges)
    ++kinds[r2.kind];
  CHECK(kinds[RangeKind::Step] == 1);
  CHECK(kinds[RangeKind::Annotation] == 1);
  CHECK(kinds[RangeKind::GpuAnnotation] == 1);
  CHECK(kinds[RangeKind::DataLoader] == 1);
  CHECK(kinds[RangeKind::Operator] == 0);
  for (const auto& r2 : p.ranges) {
    if (r2.kind == RangeKind::Step) {
      CHECK(r2.step == 12);
      CHECK(r2.end - r2.start == 20000500);
    }
    if (r2.kind == RangeKind::GpuAnnotation) {
      CHECK(r2.device == 0);
      CHECK(r2.stream == 7);
    }
  }

  REQUIRE(p.memory_samples.size() == 2);
  CHECK(p.memory_samples[0].allocated_bytes == 1003059712);
  CHECK(p.memory_samples[0].reserved_bytes == 2629828608);
  CHECK(p.memory_samples[1].allocated_bytes == 984742400);
  REQUIRE(p.allocations.size() == 2);
  CHECK(p.allocations[0].address == 137877174353920ull);
  CHECK(p.allocations[1].is_free);
  CHECK(p.allocations[1].bytes == 18317312);

  REQUIRE(p.devices.size() == 1);
  CHECK(p.devices[0].name == "NVIDIA H100 80GB HBM3");
  CHECK(p.devices[0].max_shared_memory_per_block == 232448);
}

TEST_CASE("operators are kept as ranges when asked for") {
  KinetoImportOptions o;
  o.include_operators = true;
  const auto r = importText(kEraCurrent, o);
  const auto& p = only(r);
  const auto ops = std::count_if(p.ranges.begin(), p.ranges.end(),
                                 [](auto& x) { return x.kind == RangeKind::Operator; });
  CHECK(ops == 1);
}

TEST_CASE("correlation joins do not depend on the order of events") {
  const std::string gpuFirst = R"({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 200, "dur": 10, "args": {"device": 0, "stream": 7, "correlation": 9}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 42, "tid": 43, "ts": 100, "dur": 5, "args": {"correlation": 9}}]})";
  const std::string hostFirst = R"({"traceEvents": [
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 42, "tid": 43, "ts": 100, "dur": 5, "args": {"correlation": 9}},
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 200, "dur": 10, "args": {"device": 0, "stream": 7, "correlation": 9}}]})";
  for (const auto& text : {gpuFirst, hostFirst}) {
    const auto r = importText(text);
    const auto& p = only(r);
    REQUIRE(p.kernels.size() == 1);
    CHECK(p.kernels[0].launch_start == 100000);
    CHECK(p.kernels[0].launch_end == 105000);
    CHECK(p.kernels[0].thread == 43);
    CHECK(p.info.pid == 42); // the host pid, from host-side events when no "CPU" label exists
  }
}

TEST_CASE("args written before the category are still decoded") {
  const std::string text = R"({"traceEvents": [
    {"args": {"device": 3, "stream": 21, "correlation": 5, "grid": [4, 2, 1]}, "name": "k", "ts": 10, "dur": 2, "pid": 3, "tid": 21, "ph": "X", "cat": "kernel"},
    {"args": {"name": "trainer"}, "ph": "M", "pid": 77, "tid": 0, "name": "process_name"},
    {"args": {"correlation": 5}, "ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 77, "tid": 78, "ts": 5, "dur": 1}]})";
  const auto r = importText(text);
  const auto& p = only(r);
  REQUIRE(p.kernels.size() == 1);
  CHECK(p.kernels[0].device == 3);
  CHECK(p.kernels[0].stream == 21);
  CHECK(p.kernels[0].grid == model::Dim3{4, 2, 1});
  CHECK(p.kernels[0].thread == 78);
  CHECK(p.info.command == "trainer");
}

TEST_CASE("a kernel without args takes its device and stream from pid and tid") {
  // The large-integer trace: no args at all, and an operator argument beyond int64.
  const std::string text = R"({"schemaVersion": 1, "traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce", "pid": 2, "tid": 9, "ts": 100, "dur": 50},
    {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 0, "tid": 1, "ts": 200, "dur": 100,
     "args": {"Comms Id": 10159970886766084423}}]})";
  const auto r = importText(text);
  const auto& p = only(r);
  REQUIRE(p.kernels.size() == 1);
  CHECK(p.kernels[0].device == 2);
  CHECK(p.kernels[0].stream == 9);
  CHECK(p.kernels[0].end - p.kernels[0].start == 50000);
  CHECK(p.kernels[0].flags & model::kKernelCommunication);
}

TEST_CASE("Chrome's bare-array form is a trace too") {
  const auto r = importText(
      R"([{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 1, "ts": 1, "dur": 1}])");
  CHECK(only(r).kernels.size() == 1);
}

TEST_CASE("vendors: AMD and MTIA devices are named as such") {
  const std::string amd =
      R"({"hip_runtime_version": 60443483, "deviceProperties": [{"id": 2, "name": "Radeon Graphics", "numSms": 104}],
    "traceEvents": [{"ph": "X", "cat": "kernel", "name": "Cijk_Alik", "pid": 2, "tid": 0, "ts": 1.5, "dur": 1.0,
    "args": {"device": 2, "stream": 0, "correlation": 121, "kind": "Dispatch Kernel"}}]})";
  const auto ra = importText(amd);
  REQUIRE(only(ra).devices.size() == 1);
  CHECK(only(ra).devices[0].name == "AMD Radeon Graphics");

  const std::string mtia = R"({"deviceProperties": [{"id": 17, "name": "ARTEMIS"}], "traceEvents": [
    {"ph": "X", "cat": "mtia_ccp_events", "name": "fc-dtype_Float", "pid": 17, "tid": 4, "ts": 10.0, "dur": 5.0, "args": {"correlation": 7, "stream": 1}},
    {"ph": "X", "cat": "mtia_ccp_events", "name": "dma_request", "pid": 17, "tid": 3, "ts": 20.0, "dur": 1.0, "args": {"stream": 105, "direction": "DEVICE_TO_HOST", "size": 1024}},
    {"ph": "X", "cat": "mtia_ccp_events", "name": "event_record", "pid": 17, "tid": 3, "ts": 21.0, "dur": 0.1, "args": {"stream": 105}},
    {"ph": "X", "cat": "mtia_ccp_events", "name": "event_wait", "pid": 17, "tid": 3, "ts": 22.0, "dur": 3.0, "args": {"stream": 108, "wait_on_stream": 104}},
    {"ph": "X", "cat": "mtia_runtime", "name": "runFunction", "pid": 865, "tid": 866, "ts": 8.0, "dur": 1.0, "args": {"correlation": 7}}]})";
  const auto rm = importText(mtia);
  const auto& p = only(rm);
  REQUIRE(p.kernels.size() == 1);
  CHECK(p.kernels[0].device == 17);
  CHECK(p.kernels[0].thread == 866);
  REQUIRE(p.copies.size() == 1);
  CHECK(p.copies[0].direction == CopyDirection::DeviceToHost);
  CHECK(p.copies[0].bytes == 1024);
  REQUIRE(p.syncs.size() == 1);
  CHECK(p.syncs[0].kind == SyncKind::StreamWaitEvent);
  REQUIRE(p.devices.size() == 1);
  CHECK(p.devices[0].name == "MTIA ARTEMIS");
}

TEST_CASE("several files are several ranks, in order; an error names the file") {
  test::TempDir dir;
  const auto a = dir.write("rank0.json", kEraCurrent);
  const auto b = dir.write("rank1.json.gz", test::gzipString(kEra2021));
  const auto r = importKineto({a, b});
  INFO(r.error);
  REQUIRE(r.ok());
  REQUIRE(r.trace.processes.size() == 2);
  CHECK(r.trace.processes[0].info.rank == 3);
  CHECK(r.trace.processes[1].info.pid == 25738);
  CHECK(r.trace.source.files == std::vector<std::string>{a, b});

  const auto bad = dir.write("bad.json", "{\"traceEvents\": [");
  const auto r2 = importKineto({a, bad});
  CHECK_FALSE(r2.ok());
  CHECK(r2.trace.processes.empty());
  CHECK(r2.error.rfind(bad + ": truncated JSON", 0) == 0);
  const auto r3 = importKineto({dir.path("missing.json")});
  CHECK(r3.error.find("missing.json: cannot open") != std::string::npos);
}

// One small file is read and parsed on the calling thread alone; two go through the reader thread.
// Both must import the same records, also when the file is many batches and the pool holds two:
// the serial import parses each batch as it is cut, so it never waits on a buffer.
TEST_CASE("one small file on the calling thread imports what the reader thread does") {
  test::TempDir dir;
  const auto file = dir.write("rank.json.gz", test::gzipString(kEraCurrent));
  KinetoImportOptions options;
  options.batch_bytes = 256;
  options.batches_in_flight = 2;
  const auto serial = importKineto({file}, options);
  const auto threaded = importKineto({file, file}, options);
  INFO(serial.error << threaded.error);
  REQUIRE(serial.ok());
  REQUIRE(threaded.ok());
  REQUIRE(threaded.trace.processes.size() == 2);
  const auto& a = only(serial);
  const auto& b = threaded.trace.processes[0];
  CHECK(serial.stats.json_bytes > 4 * options.batch_bytes); // several batches
  CHECK(threaded.stats.json_bytes == 2 * serial.stats.json_bytes);
  CHECK(threaded.stats.events == 2 * serial.stats.events);
  CHECK(a.eventCount() == b.eventCount());
  REQUIRE(a.kernels.size() == b.kernels.size());
  REQUIRE_FALSE(a.kernels.empty());
  for (size_t i = 0; i < a.kernels.size(); ++i) {
    CHECK(a.kernels[i].start == b.kernels[i].start);
    CHECK(a.kernels[i].end == b.kernels[i].end);
    CHECK(a.names.get(a.kernels[i].name) == b.names.get(b.kernels[i].name));
  }
  CHECK(a.info.rank == b.info.rank);

  // An error half-way through still ends the serial import, with the file's name.
  const auto truncated = dir.write("cut.json", std::string(kEraCurrent).substr(0, 1500));
  const auto cut = importKineto({truncated}, options);
  CHECK_FALSE(cut.ok());
  CHECK(cut.error.rfind(truncated + ": ", 0) == 0);
}

TEST_CASE("gzip is found by its magic bytes, whatever the name; members may be concatenated") {
  const auto plain = importText(kEraCurrent);
  const auto gz = importKinetoBuffer(test::gzipString(kEraCurrent), "trace.json");
  REQUIRE(gz.ok());
  CHECK(gz.trace.processes[0].kernels.size() == plain.trace.processes[0].kernels.size());
  CHECK(gz.stats.json_bytes == std::string(kEraCurrent).size());

  const std::string text = kEraCurrent;
  const size_t cut = text.size() / 2;
  const std::string twoMembers =
      test::gzipString(text.substr(0, cut)) + test::gzipString(text.substr(cut));
  const auto multi = importKinetoBuffer(twoMembers, "multi.json.gz");
  INFO(multi.error);
  REQUIRE(multi.ok());
  CHECK(multi.trace.processes[0].syncs.size() == 4);
}

TEST_CASE("small batches, the scalar scanner and the AVX2 scanner all give the same trace") {
  const auto reference = importText(kEraCurrent);
  REQUIRE(reference.ok());
  const auto& ref = reference.trace.processes[0];
  for (size_t batch : {256, 300, 512, 1000, 4096}) {
    for (bool scalar : {false, true}) {
      KinetoImportOptions o;
      o.batch_bytes = batch;
      o.batches_in_flight = 2;
      o.force_scalar_scan = scalar;
      const auto r = importKinetoBuffer(test::gzipString(kEraCurrent), "t.json.gz", o);
      INFO("batch " << batch << " scalar " << scalar << " " << r.error);
      REQUIRE(r.ok());
      const auto& p = r.trace.processes[0];
      CHECK(p.kernels.size() == ref.kernels.size());
      CHECK(p.copies.size() == ref.copies.size());
      CHECK(p.syncs.size() == ref.syncs.size());
      CHECK(p.ranges.size() == ref.ranges.size());
      CHECK(p.memory_samples.size() == ref.memory_samples.size());
      CHECK(p.devices.size() == ref.devices.size());
      CHECK(p.kernels[0].launch_start == ref.kernels[0].launch_start);
      CHECK(r.stats.events == reference.stats.events);
    }
  }
}

TEST_CASE("progress reports input bytes up to the total") {
  test::TempDir dir;
  const auto f = dir.write("t.json.gz", test::gzipString(kEraCurrent));
  std::vector<std::pair<uint64_t, uint64_t>> calls;
  KinetoImportOptions o;
  o.batch_bytes = 512;
  o.progress = [&](uint64_t done, uint64_t total) { calls.emplace_back(done, total); };
  const auto r = importKineto({f}, o);
  REQUIRE(r.ok());
  REQUIRE(calls.size() >= 2);
  const uint64_t size = test::readFile(f).size();
  for (size_t i = 0; i < calls.size(); ++i) {
    CHECK(calls[i].second == size);
    CHECK(calls[i].first <= size);
    if (i) CHECK(calls[i].first >= calls[i - 1].first);
  }
  CHECK(calls.back().first == size);
}

TEST_CASE("several files import in parallel pipelines, in the order given") {
  test::TempDir dir;
  std::vector<std::string> files;
  for (int i = 0; i < 7; ++i) {
    const std::string text =
        R"({"distributedInfo": {"rank": )" + std::to_string(i) + R"(}, "traceEvents": [)" +
        R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": )" +
        std::to_string(i + 1) + "}]}";
    files.push_back(dir.write("rank" + std::to_string(i) + ".json.gz",
                              test::gzipString(i % 2 ? text : std::string(kEraCurrent) + " ")));
  }
  for (size_t parallel : {1, 3, 7}) {
    KinetoImportOptions o;
    o.parallel_files = parallel;
    o.batch_bytes = 512;
    uint64_t last = 0;
    o.progress = [&](uint64_t done, uint64_t total) {
      CHECK(done >= last);
      CHECK(done <= total);
      last = done;
    };
    const auto r = importKineto(files, o);
    INFO("parallel " << parallel << ": " << r.error);
    REQUIRE(r.ok());
    REQUIRE(r.trace.processes.size() == files.size());
    for (int i = 0; i < 7; ++i) {
      const auto& p = r.trace.processes[size_t(i)];
      if (i % 2) {
        CHECK(p.info.rank == i);
        REQUIRE(p.kernels.size() == 1);
        CHECK(p.kernels[0].end - p.kernels[0].start == (i + 1) * 1000);
      } else {
        CHECK(p.info.rank == 3);
        CHECK(p.kernels.size() == 2);
      }
    }
    // One bad file among them: the whole import fails, naming that file.
    auto withBad = files;
    withBad[4] = dir.write("bad.json", "{\"traceEvents\": [{\"ph\": \"X\"}");
    last = 0;
    const auto bad = importKineto(withBad, o);
    CHECK(bad.error.rfind(withBad[4] + ": truncated JSON", 0) == 0);
    CHECK(bad.trace.processes.empty());
  }
}

TEST_CASE("collectives: record_param_comms joins its kernel by External id; newer kernels carry "
          "their own") {
  const char* text = R"JSON({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1, "ts": 10,
     "dur": 5, "args": {"External id": 7, "Collective name": "_allgather_base",
     "In msg nelems": 100, "Out msg nelems": 800, "Group size": 8, "dtype": "BFloat16",
     "Process Group Name": "3"}},
    {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
     "pid": 0, "tid": 7, "ts": 20, "dur": 4,
     "args": {"External id": 7, "device": 0, "stream": 7, "correlation": 55}},
    {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
     "pid": 0, "tid": 7, "ts": 30, "dur": 4,
     "args": {"External id": 9, "device": 0, "stream": 7, "correlation": 56,
     "Collective name": "allreduce", "In msg nelems": 64, "Out msg nelems": 64,
     "Group size": 2, "dtype": "Float"}},
    {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1, "ts": 40,
     "dur": 5, "args": {"External id": 11, "Collective name": "broadcast", "dtype": "Float"}}]})JSON";
  const auto r = importText(text);
  const auto& p = only(r);
  REQUIRE(p.collectives.size() == 2); // the broadcast launched no kernel in the trace
  auto byCorrelation = [&](uint64_t c) {
    for (const auto& x : p.collectives)
      if (x.correlation == c) return x;
    FAIL("no collective with correlation " << c);
    return model::Collective{};
  };
  const auto gather = byCorrelation(55);
  CHECK(gather.kind == model::CollectiveKind::AllGather);
  CHECK(gather.element == model::ElementType::BFloat16);
  CHECK(gather.in_count == 100);
  CHECK(gather.out_count == 800);
  CHECK(gather.group_size == 8);
  CHECK(gather.bytes() == 1600);
  CHECK(gather.communicator != 0);
  const auto reduce = byCorrelation(56);
  CHECK(reduce.kind == model::CollectiveKind::AllReduce);
  CHECK(reduce.element == model::ElementType::Float32);
  CHECK(reduce.bytes() == 256);
  CHECK(reduce.group_size == 2);
}

TEST_CASE("collectives: PyTorch's collective and dtype names") {
  using K = model::CollectiveKind;
  using E = model::ElementType;
  const std::pair<const char*, K> kinds[] = {{"allreduce", K::AllReduce},
                                             {"allreduce_coalesced", K::AllReduce},
                                             {"_allgather_base", K::AllGather},
                                             {"all_gather_into_tensor", K::AllGather},
                                             {"allgather", K::AllGather},
                                             {"reduce_scatter_tensor", K::ReduceScatter},
                                             {"_reduce_scatter_base", K::ReduceScatter},
                                             {"broadcast", K::Broadcast},
                                             {"reduce", K::Reduce},
                                             {"alltoall_base", K::AllToAll},
                                             {"all_to_all", K::AllToAll},
                                             {"send", K::Send},
                                             {"recv", K::Recv},
                                             {"barrier", K::Barrier},
                                             {"scatter", K::Unknown},
                                             {"", K::Unknown}};
  for (const auto& [name, kind] : kinds) {
    INFO(name);
    CHECK(collectiveKindFromPyTorch(name) == kind);
  }
  const std::pair<const char*, E> types[] = {{"Float", E::Float32},
                                             {"float", E::Float32},
                                             {"BFloat16", E::BFloat16},
                                             {"c10::BFloat16", E::BFloat16},
                                             {"Half", E::Float16},
                                             {"c10::Half", E::Float16},
                                             {"Double", E::Float64},
                                             {"Long", E::Int64},
                                             {"Int", E::Int32},
                                             {"Char", E::Int8},
                                             {"Byte", E::Uint8},
                                             {"Float8_e4m3fn", E::Float8E4M3},
                                             {"Float8_e5m2", E::Float8E5M2},
                                             {"Complex", E::Unknown}};
  for (const auto& [name, type] : types) {
    INFO(name);
    CHECK(elementTypeFromPyTorch(name) == type);
  }
}
