// The Chrome-trace exporter: valid JSON with the rows a viewer needs, and a round trip through the
// importer that gives back the same records (real Kineto traces and a live-style trace).
#include "advisor/export/chrome_trace.h"
#include "advisor/import/kineto_importer.h"
#include "tests/advisor/import/import_test_util.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <set>
#include <sstream>

using namespace gpuwise;
using namespace gpuwise::advisor;
using namespace gpuwise::model;
namespace fs = std::filesystem;

namespace {

std::string exportToString(const Trace& t) {
  std::ostringstream out;
  std::string error;
  REQUIRE(writeChromeTrace(t, out, &error));
  return out.str();
}

// Every record as one line of text with its names resolved: compared as sorted lists, so the
// test shows exactly which record differs.
std::vector<std::string> lines(const ProcessTrace& p) {
  std::vector<std::string> v;
  auto n = [&](NameId id) { return std::string(p.names.get(id)); };
  std::ostringstream s;
  auto flush = [&] {
    v.push_back(s.str());
    s.str("");
  };
  for (const auto& k : p.kernels) {
    s << "kernel " << n(k.name) << " " << k.start << " " << k.end << " launch " << k.launch_start
      << " " << k.launch_end << " corr " << k.correlation << " dev " << k.device << " str "
      << k.stream << " thr " << k.thread << " grid " << k.grid.x << "," << k.grid.y << ","
      << k.grid.z << " block " << k.block.x << "," << k.block.y << "," << k.block.z << " regs "
      << k.registers_per_thread << " smem " << k.static_shared_bytes << "+"
      << k.dynamic_shared_bytes << " graph " << k.graph_id << " flags " << int(k.flags) << " occ "
      << k.achieved_occupancy;
    flush();
  }
  for (const auto& c : p.copies) {
    s << "copy " << c.start << " " << c.end << " call " << c.call_start << " " << c.call_end
      << " corr " << c.correlation << " bytes " << c.bytes << " dev " << c.device << " str "
      << c.stream << " thr " << c.thread << " " << toString(c.direction) << " " << toString(c.src)
      << "->" << toString(c.dst) << " async " << c.async;
    flush();
  }
  for (const auto& m : p.memsets) {
    s << "memset " << m.start << " " << m.end << " call " << m.call_start << " " << m.call_end
      << " corr " << m.correlation << " bytes " << m.bytes << " dev " << m.device << " str "
      << m.stream << " thr " << m.thread << " " << toString(m.dst) << " async " << m.async;
    flush();
  }
  for (const auto& x : p.syncs) {
    s << "sync " << toString(x.kind) << " " << x.start << " " << x.end << " corr " << x.correlation
      << " dev " << x.device << " str " << x.stream << " thr " << x.thread;
    flush();
  }
  for (const auto& a : p.api_calls) {
    s << "api " << n(a.name) << " " << a.start << " " << a.end << " corr " << a.correlation
      << " thr " << a.thread;
    flush();
  }
  for (const auto& a : p.allocations) {
    s << "alloc " << a.time << " " << a.address << " " << a.bytes << " dev " << a.device << " "
      << toString(a.kind) << " free " << a.is_free;
    flush();
  }
  for (const auto& m : p.memory_samples) {
    s << "mem " << m.time << " dev " << m.device << " " << m.allocated_bytes << " "
      << m.reserved_bytes;
    flush();
  }
  for (const auto& r : p.ranges) {
    s << "range " << toString(r.kind) << " " << n(r.name) << " " << r.start << " " << r.end
      << " thr " << r.thread << " dev " << r.device << " str " << r.stream << " step " << r.step;
    flush();
  }
  for (const auto& d : p.devices) {
    s << "device " << d.index << " " << d.name << " sms " << d.sm_count << " mem "
      << d.memory_total_bytes << " cc " << d.compute_major << "." << d.compute_minor << " "
      << d.max_threads_per_sm << " " << d.max_blocks_per_sm << " " << d.registers_per_sm << " "
      << d.shared_memory_per_sm << " " << d.max_shared_memory_per_block << " " << d.warp_size
      << " mig " << d.mig_profile << " sim " << d.simulated;
    flush();
  }
  const auto& i = p.info;
  s << "info " << i.pid << " " << i.ppid << " " << i.host << " " << i.command << " " << i.rank
    << " " << i.local_rank << " " << i.world_size << " " << i.pod << " " << i.ns << " "
    << i.container << " " << i.tier_reason << " dropped " << p.events_dropped << " wall "
    << p.wall_start << " " << p.wall_end;
  flush();
  std::sort(v.begin(), v.end());
  return v;
}

void expectSame(const ProcessTrace& a, const ProcessTrace& b) {
  const auto la = lines(a), lb = lines(b);
  CHECK(la.size() == lb.size());
  std::vector<std::string> onlyA, onlyB;
  std::set_difference(la.begin(), la.end(), lb.begin(), lb.end(), std::back_inserter(onlyA));
  std::set_difference(lb.begin(), lb.end(), la.begin(), la.end(), std::back_inserter(onlyB));
  for (size_t i = 0; i < std::min<size_t>(onlyA.size(), 5); ++i)
    UNSCOPED_INFO("only before: " << onlyA[i]);
  for (size_t i = 0; i < std::min<size_t>(onlyB.size(), 5); ++i)
    UNSCOPED_INFO("only after:  " << onlyB[i]);
  CHECK(onlyA.empty());
  CHECK(onlyB.empty());
}

// The live trace's process: a ranked pod container, on two H200s (one a MIG slice with full
// properties, one with the minimum).
void addLiveIdentity(ProcessTrace& p) {
  p.info = {.pid = 4242,
            .ppid = 1,
            .host = "node-1",
            .command = "python train.py --bs 64",
            .rank = 1,
            .local_rank = 1,
            .world_size = 2,
            .pod = "train-0",
            .ns = "ml",
            .container = "trainer",
            .tier = CollectionTier::Cupti,
            .tier_reason = "CUPTI activity"};
  p.devices.push_back({.index = 0,
                       .name = "NVIDIA H200",
                       .sm_count = 132,
                       .memory_total_bytes = 150'000'000'000ull,
                       .compute_major = 9,
                       .compute_minor = 0,
                       .mig_profile = "3g.71gb",
                       .max_threads_per_sm = 2048,
                       .max_blocks_per_sm = 32,
                       .registers_per_sm = 65536,
                       .shared_memory_per_sm = 233472,
                       .max_shared_memory_per_block = 232448,
                       .warp_size = 32,
                       .simulated = true});
  p.devices.push_back({.index = 1, .name = "NVIDIA H200", .sm_count = 132});
}

// Fifty kernels over both devices and three streams: every fifth an NCCL kernel, some from a
// graph, one cooperative, names that need escaping.
void addLiveKernels(ProcessTrace& p) {
  const NameId gemm = p.names.intern("void gemm<float, \"tiled\">(float const*, float*)\\n\t");
  const NameId nccl =
      p.names.intern("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
  for (int i = 0; i < 50; ++i) {
    KernelExec k{.start = 1'000'000 + i * 10'000,
                 .end = 1'000'000 + i * 10'000 + 7'123,
                 .launch_start = 990'000 + i * 10'000,
                 .launch_end = 991'500 + i * 10'000,
                 .correlation = uint64_t(100 + i),
                 .name = i % 5 ? gemm : nccl,
                 .device = uint32_t(i % 2),
                 .stream = uint32_t(7 + i % 3),
                 .thread = 4243,
                 .grid = {uint32_t(i + 1), 2, 1},
                 .block = {256, 1, 1},
                 .registers_per_thread = 64,
                 .static_shared_bytes = 1024,
                 .dynamic_shared_bytes = uint32_t(i * 16),
                 .graph_id = uint32_t(i % 7 == 0 ? 3 : 0),
                 .achieved_occupancy = i % 3 ? 0.4375f : -1.0f};
    k.flags = uint8_t((i % 5 ? 0 : kKernelCommunication) | (k.graph_id ? kKernelFromGraph : 0) |
                      (i == 11 ? kKernelCooperative : 0));
    p.kernels.push_back(k);
  }
}

// A pageable and a pinned copy, and a memset, on different devices and streams.
void addLiveTransfers(ProcessTrace& p) {
  p.copies.push_back({.start = 900'000,
                      .end = 950'500,
                      .call_start = 899'000,
                      .call_end = 951'000,
                      .correlation = 90,
                      .bytes = 1 << 26,
                      .device = 0,
                      .stream = 7,
                      .thread = 4243,
                      .direction = CopyDirection::HostToDevice,
                      .src = MemoryKind::Pageable,
                      .dst = MemoryKind::Device});
  p.copies.push_back({.start = 1'600'000,
                      .end = 1'600'900,
                      .call_start = 1'599'000,
                      .call_end = 1'599'100,
                      .correlation = 91,
                      .bytes = 4096,
                      .device = 1,
                      .stream = 8,
                      .thread = 4243,
                      .direction = CopyDirection::DeviceToHost,
                      .src = MemoryKind::Device,
                      .dst = MemoryKind::Pinned,
                      .async = true});
  p.memsets.push_back({.start = 960'000,
                       .end = 961'000,
                       .call_start = 959'000,
                       .call_end = 959'500,
                       .correlation = 92,
                       .bytes = 512,
                       .device = 0,
                       .stream = 7,
                       .thread = 4243,
                       .dst = MemoryKind::Device,
                       .async = true});
}

// Host syncs of their own (one with a correlation, one without) and the few API calls the shim
// records (a runtime and a driver call).
void addLiveHostEvents(ProcessTrace& p) {
  p.syncs.push_back({.start = 1'500'000,
                     .end = 1'520'000,
                     .correlation = 93,
                     .device = 0,
                     .stream = 7,
                     .thread = 4243,
                     .kind = SyncKind::Stream});
  p.syncs.push_back({.start = 1'530'000,
                     .end = 1'540'000,
                     .device = 0,
                     .thread = 4243,
                     .kind = SyncKind::Device});
  p.api_calls.push_back(
      {.start = 880'000, .end = 885'000, .name = p.names.intern("cudaMalloc"), .thread = 4243});
  p.api_calls.push_back({.start = 886'000,
                         .end = 886'100,
                         .correlation = 95,
                         .name = p.names.intern("cuMemAlloc_v2"),
                         .thread = 4244});
}

// Device and pinned allocations, a free, and memory samples (one without an allocated total).
void addLiveMemory(ProcessTrace& p) {
  p.allocations.push_back({.time = 880'500,
                           .address = 0x7f0000000000,
                           .bytes = 1 << 20,
                           .device = 0,
                           .kind = MemoryKind::Device});
  p.allocations.push_back({.time = 881'000,
                           .address = 0x7f0000100000,
                           .bytes = 1 << 16,
                           .device = 0,
                           .kind = MemoryKind::Pinned});
  p.allocations.push_back({.time = 1'700'000,
                           .address = 0x7f0000000000,
                           .bytes = 1 << 20,
                           .device = 0,
                           .kind = MemoryKind::Device,
                           .is_free = true});
  p.memory_samples.push_back(
      {.time = 880'500, .device = 0, .allocated_bytes = 1 << 20, .reserved_bytes = 2 << 20});
  p.memory_samples.push_back(
      {.time = 1'700'000, .device = 0, .allocated_bytes = -1, .reserved_bytes = 2 << 20});
}

// An NVTX-named step, a data-loader wait, and a host and a GPU annotation of the same name.
void addLiveRanges(ProcessTrace& p) {
  p.ranges.push_back({.start = 980'000,
                      .end = 1'600'000,
                      .name = p.names.intern("train step 3"),
                      .thread = 4243,
                      .kind = RangeKind::Step,
                      .step = 3});
  p.ranges.push_back({.start = 950'000,
                      .end = 979'000,
                      .name = p.names.intern("next(batch)"),
                      .thread = 4243,
                      .kind = RangeKind::DataLoader});
  p.ranges.push_back({.start = 990'000,
                      .end = 1'100'000,
                      .name = p.names.intern("forward"),
                      .thread = 4243,
                      .kind = RangeKind::Annotation});
  p.ranges.push_back({.start = 1'000'000,
                      .end = 1'200'000,
                      .name = p.names.intern("forward"),
                      .device = 1,
                      .stream = 8,
                      .kind = RangeKind::GpuAnnotation});
}

// A trace as the live shim produces it: launches on the GPU records, no API call list, host syncs
// of their own, NVTX-named steps, pinned allocations, two devices, names that need escaping.
Trace liveTrace() {
  Trace t;
  t.source.kind = SourceKind::Live;
  t.source.simulated = true;
  t.source.files = {"run.gwt"};
  ProcessTrace p;
  addLiveIdentity(p);
  addLiveKernels(p);
  addLiveTransfers(p);
  addLiveHostEvents(p);
  addLiveMemory(p);
  addLiveRanges(p);
  p.events_dropped = 17;
  p.wall_start = 800'000;
  p.wall_end = 2'000'000;
  p.sortByTime();
  t.processes.push_back(std::move(p));
  return t;
}

} // namespace

TEST_CASE("export writes valid Chrome trace JSON with named rows and balanced flows") {
  const Trace t = liveTrace();
  const std::string text = exportToString(t);
  const auto doc = nlohmann::json::parse(text); // throws on invalid JSON
  REQUIRE(doc.contains("traceEvents"));
  const auto& events = doc["traceEvents"];
  size_t x = 0, flowsS = 0, flowsF = 0, meta = 0, counters = 0;
  std::set<std::string> processNames;
  for (const auto& e : events) {
    const std::string ph = e.at("ph");
    REQUIRE(e.contains("pid"));
    REQUIRE(e.contains("ts"));
    if (ph == "X") {
      ++x;
      CHECK(e.at("dur").get<double>() >= 0);
      CHECK(e.contains("name"));
      CHECK(e.contains("tid"));
    } else if (ph == "s") {
      ++flowsS;
    } else if (ph == "f") {
      ++flowsF;
      CHECK(e.at("bp") == "e");
    } else if (ph == "M") {
      ++meta;
      if (e.at("name") == "process_name") processNames.insert(e.at("args").at("name"));
    } else if (ph == "C") {
      ++counters;
    }
  }
  const auto& p = t.processes[0];
  // GPU work, syncs, calls, host ranges, plus one synthesized call per launch with no API call.
  CHECK(x == p.kernels.size() + p.copies.size() + p.memsets.size() + p.syncs.size() +
                 p.api_calls.size() + p.ranges.size() + p.kernels.size() + p.copies.size() +
                 p.memsets.size());
  CHECK(flowsS == p.kernels.size() + p.copies.size() + p.memsets.size());
  CHECK(flowsS == flowsF);
  CHECK(counters == p.memory_samples.size());
  CHECK(processNames.count("rank 1: python train.py --bs 64"));
  CHECK(processNames.count("GPU 0: NVIDIA H200"));
  CHECK(processNames.count("GPU 1: NVIDIA H200"));
  CHECK(meta > 6);
  // Exact microsecond text: 1'000'000 ns + 7'123 ns -> "ts":1000.000,"dur":7.123
  CHECK(text.find("\"ts\":1000.000,\"dur\":7.123") != std::string::npos);
}

TEST_CASE("a live-style trace survives export and re-import") {
  const Trace t = liveTrace();
  const std::string text = exportToString(t);
  KinetoImportOptions o;
  const auto back = importKinetoBuffer(text, "exported.json", o);
  INFO(back.error);
  REQUIRE(back.ok());
  REQUIRE(back.trace.processes.size() == 1);
  ProcessTrace expected = t.processes[0];
  // What the re-import adds or changes, by design: the host calls synthesized for launches that
  // had none (so the viewer shows them and the join can be made), and the collection tier.
  for (const auto& k : expected.kernels)
    expected.api_calls.push_back({k.launch_start, k.launch_end, k.correlation,
                                  expected.names.intern("cudaLaunchKernel"), k.thread});
  expected.api_calls.push_back({899'000, 951'000, 90, expected.names.intern("cudaMemcpy"), 4243});
  expected.api_calls.push_back(
      {1'599'000, 1'599'100, 91, expected.names.intern("cudaMemcpyAsync"), 4243});
  expected.api_calls.push_back(
      {959'000, 959'500, 92, expected.names.intern("cudaMemsetAsync"), 4243});
  // The synthesized blocking cudaMemcpy is a host wait on re-import, as it would be in Kineto.
  expected.syncs.push_back({.start = 899'000,
                            .end = 951'000,
                            .correlation = 90,
                            .device = 0,
                            .stream = 7,
                            .thread = 4243,
                            .kind = SyncKind::SyncCopy});
  expectSame(expected, back.trace.processes[0]);
  CHECK(back.trace.processes[0].info.tier == CollectionTier::Imported);
}

// On the full set; on the subset in tests/data/traces, the listed traces it has.
TEST_CASE("real Kineto traces round-trip through export and import unchanged") {
  const fs::path root = fs::path(test::tracesDir()) / "kineto";
  const bool full = gpuwise::test::haveFullTraces();
  int checked = 0;
  for (const char* rel :
       {"hta/nccl_parser_config/nccl_data.json.gz",
        "kineto_tb_plugin/resnet50_num_workers_4/worker0.1623212756351.pt.trace.json.gz",
        "hta/critical_path/cuda_event_sync/event_sync_trace.json.gz",
        "hta/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz",
        "hta/mtia_inference_trace/mtia_inference_rank_0.json.gz",
        "tracelens/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
        "tracelens/mi210/gpu_only_trace/gpu_only_trace.json.gz",
        "hta/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
        "hta/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz"}) {
    INFO(rel);
    if (!full && !fs::exists(root / rel)) continue;
    ++checked;
    const auto first = importKineto({(root / rel).string()});
    REQUIRE(first.ok());
    const std::string text = exportToString(first.trace);
    const auto second = importKinetoBuffer(text, "exported.json");
    INFO(second.error);
    REQUIRE(second.ok());
    REQUIRE(second.trace.processes.size() == 1);
    expectSame(first.trace.processes[0], second.trace.processes[0]);
  }
  CHECK(checked >= 3);
}

TEST_CASE("several processes export to one file with distinct rows") {
  Trace t = liveTrace();
  Trace other = liveTrace();
  other.processes[0].info.rank = 0;
  t.processes.push_back(std::move(other.processes[0])); // same pid on purpose
  const std::string text = exportToString(t);
  const auto doc = nlohmann::json::parse(text);
  std::set<int64_t> hostPids, gpuPids;
  for (const auto& e : doc["traceEvents"]) {
    if (e.at("ph") != "X") continue;
    if (e.at("cat") == "kernel") gpuPids.insert(e.at("pid").get<int64_t>());
    if (e.at("cat") == "cuda_runtime") hostPids.insert(e.at("pid").get<int64_t>());
  }
  CHECK(hostPids.size() == 2); // the duplicate pid got a row of its own
  CHECK(gpuPids.size() == 4);  // two devices per process
  CHECK(doc["gpuwise"]["processes"].size() == 2);
  const auto back = importKinetoBuffer(text, "two.json");
  CHECK(back.ok()); // one file is one process on import: viewers are the audience here
}

TEST_CASE("writing to a path that cannot be created is one line naming the path") {
  test::TempDir dir;
  std::string error;
  CHECK_FALSE(writeChromeTraceFile(liveTrace(), dir.path("no/such/dir/out.json"), &error));
  CHECK(error.find("no/such/dir/out.json: ") != std::string::npos);
  const std::string good = dir.path("out.json");
  REQUIRE(writeChromeTraceFile(liveTrace(), good, &error));
  const auto back = importKineto({good});
  CHECK(back.ok());
}
