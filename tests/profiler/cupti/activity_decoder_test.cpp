// Decoding hand-built real CUPTI 13 records through the FakeCuptiPort, with the correlation join.
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

const CUpti_CallbackId kLaunch13 = CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000;
const CUpti_CallbackId kMemcpyAsync = CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020;

} // namespace

TEST_CASE("A kernel joins the runtime call that launched it") {
  Buffer b;
  model::NameTable names;
  ActivityDecoder d(b.port, names);
  build::KernelArgs k;
  k.correlation = 42;
  k.start = 5000;
  k.end = 9000;
  k.name = "_Z6addOnePfi";
  k.device = 1;
  k.stream = 13;
  k.grid[0] = 4;
  k.grid[1] = 2;
  k.block[0] = 256;
  k.registers = 32;
  k.static_shared = 1024;
  k.dynamic_shared = 2048;
  b.add(build::api(true, kLaunch13, 42, 777, 1000, 1500));
  b.add(build::kernel(k));
  DecodedActivity out;
  b.decodeInto(d, out);

  REQUIRE(out.kernels.size() == 1);
  const model::KernelExec& e = out.kernels[0];
  CHECK(e.start == 5000);
  CHECK(e.end == 9000);
  CHECK(e.launch_start == 1000);
  CHECK(e.launch_end == 1500);
  CHECK(e.thread == 777);
  CHECK(e.correlation == 42);
  CHECK(names.get(e.name) == "_Z6addOnePfi");
  CHECK(e.device == 1);
  CHECK(e.stream == 13);
  CHECK(e.grid == model::Dim3{4, 2, 1});
  CHECK(e.block == model::Dim3{256, 1, 1});
  CHECK(e.registers_per_thread == 32);
  CHECK(e.static_shared_bytes == 1024);
  CHECK(e.dynamic_shared_bytes == 2048);
  CHECK(e.flags == 0);
  REQUIRE(out.api_spans.size() == 1);
  CHECK(out.api_spans[0].cls == ApiClass::Launch);
  CHECK(out.api_spans[0].thread == 777);
  CHECK(d.stats().joined == 1);
  CHECK(d.heldRecords() == 0);
}

TEST_CASE("A GPU record that arrives before its API record is held, then joined") {
  Buffer b;
  model::NameTable names;
  ActivityDecoder d(b.port, names);
  b.add(build::memcpy(7, 2000, 3000, 1 << 20, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD,
                      CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
                      false));
  DecodedActivity out;
  b.decodeInto(d, out);
  CHECK(out.copies.empty());
  CHECK(d.heldRecords() == 1);

  b.add(build::api(true, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, 7, 55, 1900, 3100));
  b.decodeInto(d, out);
  REQUIRE(out.copies.size() == 1);
  const model::Copy& c = out.copies[0];
  CHECK(c.start == 2000);
  CHECK(c.end == 3000);
  CHECK(c.call_start == 1900);
  CHECK(c.call_end == 3100);
  CHECK(c.thread == 55);
  CHECK(c.bytes == (1u << 20));
  CHECK(c.direction == model::CopyDirection::HostToDevice);
  CHECK(c.src == model::MemoryKind::Pageable);
  CHECK(c.dst == model::MemoryKind::Device);
  CHECK_FALSE(c.async);
  CHECK(d.heldRecords() == 0);
}

TEST_CASE("Copies, memsets and their kinds decode from Memcpy6 and Memset4") {
  Buffer b;
  model::NameTable names;
  ActivityDecoder d(b.port, names);
  b.add(build::api(true, kMemcpyAsync, 1, 9, 10, 20));
  b.add(build::memcpy(1, 100, 200, 4096, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH,
                      CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, CUPTI_ACTIVITY_MEMORY_KIND_PINNED, true));
  b.add(build::api(true, kMemcpyAsync, 2, 9, 30, 40));
  b.add(build::memcpy(2, 300, 400, 8, CUPTI_ACTIVITY_MEMCPY_KIND_PTOP,
                      CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, true));
  b.add(build::api(true, CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020, 3, 9, 50, 60));
  b.add(build::memset(3, 500, 600, 65536, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, true, 2, 21));
  DecodedActivity out;
  b.decodeInto(d, out);
  REQUIRE(out.copies.size() == 2);
  CHECK(out.copies[0].direction == model::CopyDirection::DeviceToHost);
  CHECK(out.copies[0].dst == model::MemoryKind::Pinned);
  CHECK(out.copies[0].async);
  CHECK(out.copies[1].direction == model::CopyDirection::PeerToPeer);
  REQUIRE(out.memsets.size() == 1);
  const model::Memset& m = out.memsets[0];
  CHECK(m.bytes == 65536);
  CHECK(m.dst == model::MemoryKind::Device);
  CHECK(m.async);
  CHECK(m.device == 2);
  CHECK(m.stream == 21);
  CHECK(m.call_start == 50);
  CHECK(m.thread == 9);
  CHECK(out.api_spans.size() == 3);
  CHECK(out.api_spans[2].cls == ApiClass::Memset);
}

TEST_CASE("Synchronization2 records become host syncs with their thread and device") {
  Buffer b;
  model::NameTable names;
  ActivityDecoder d(b.port, names);
  // A kernel on context 5 teaches the decoder that context 5 is device 3.
  build::KernelArgs k;
  k.correlation = 1;
  k.device = 3;
  k.context = 5;
  b.add(build::kernel(k));
  b.add(build::api(true, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, 2, 88, 100, 900));
  b.add(build::sync(2, 110, 890, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, 5, 14));
  b.add(build::api(true, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, 3, 88, 1000, 2000));
  b.add(build::sync(3, 1010, 1990, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE, 5));
  b.add(build::api(false, CUPTI_DRIVER_TRACE_CBID_cuEventSynchronize, 4, 89, 2100, 2200));
  b.add(build::sync(4, 2110, 2190, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE, 5));
  DecodedActivity out;
  b.decodeInto(d, out);
  REQUIRE(out.syncs.size() == 3);
  CHECK(out.syncs[0].kind == model::SyncKind::Stream);
  CHECK(out.syncs[0].stream == 14);
  CHECK(out.syncs[0].device == 3);
  CHECK(out.syncs[0].thread == 88);
  CHECK(out.syncs[0].start == 110);
  CHECK(out.syncs[0].end == 890);
  CHECK(out.syncs[1].kind == model::SyncKind::Device);
  CHECK(out.syncs[1].stream == 0); // not applicable (CUPTI_SYNCHRONIZATION_INVALID_VALUE)
  CHECK(out.syncs[2].kind == model::SyncKind::Event);
  CHECK(out.syncs[2].thread == 89);
  REQUIRE(out.api_spans.size() == 3);
  CHECK(out.api_spans[2].cls == ApiClass::Sync);
}

TEST_CASE("Memory4 records become allocations and frees") {
  Buffer b;
  model::NameTable names;
  ActivityDecoder d(b.port, names);
  b.add(
      build::memory(1, 100, 0x7f0000000000, 1 << 30, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, false, 1));
  b.add(build::memory(2, 200, 0x500000, 4096, CUPTI_ACTIVITY_MEMORY_KIND_PINNED, false));
  b.add(build::memory(3, 300, 0x7f0000000000, 1 << 30, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, true, 1));
  DecodedActivity out;
  b.decodeInto(d, out);
  REQUIRE(out.allocations.size() == 3);
  CHECK(out.allocations[0].time == 100);
  CHECK(out.allocations[0].address == 0x7f0000000000);
  CHECK(out.allocations[0].bytes == (uint64_t{1} << 30));
  CHECK(out.allocations[0].device == 1);
  CHECK(out.allocations[0].kind == model::MemoryKind::Device);
  CHECK_FALSE(out.allocations[0].is_free);
  CHECK(out.allocations[1].kind == model::MemoryKind::Pinned);
  CHECK(out.allocations[2].is_free);
}

TEST_CASE("Graph-node kernels share the graph launch's correlation and are flagged") {
  Buffer b;
  model::NameTable names;
  ActivityDecoder d(b.port, names);
  for (int i = 0; i < 3; ++i) {
    build::KernelArgs k;
    k.correlation = 50;
    k.start = 1000 + i * 100;
    k.end = 1050 + i * 100;
    k.name = i == 2 ? "ncclDevKernel_AllReduce_Sum_f32_RING_LL" : "_Z4stepv";
    k.graph_id = 9;
    k.graph_node_id = 100 + i;
    b.add(build::kernel(k));
  }
  b.add(build::api(true, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, 50, 4, 500, 600));
  DecodedActivity out;
  b.decodeInto(d, out);
  REQUIRE(out.kernels.size() == 3);
  for (const auto& k : out.kernels) {
    CHECK(k.graph_id == 9);
    CHECK((k.flags & model::kKernelFromGraph) != 0);
    CHECK(k.launch_start == 500);
    CHECK(k.thread == 4);
  }
  CHECK((out.kernels[2].flags & model::kKernelCommunication) != 0);
  CHECK((out.kernels[0].flags & model::kKernelCommunication) == 0);
  CHECK(out.api_spans[0].cls == ApiClass::GraphLaunch);
  // A later kernel of the same graph launch still finds the API record.
  build::KernelArgs k;
  k.correlation = 50;
  k.graph_id = 9;
  k.launch_type = CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE;
  b.add(build::kernel(k));
  out.clear();
  b.decodeInto(d, out);
  REQUIRE(out.kernels.size() == 1);
  CHECK(out.kernels[0].launch_end == 600);
  CHECK((out.kernels[0].flags & model::kKernelCooperative) != 0);
}

TEST_CASE("A runtime call and the driver call inside it join as the outer span") {
  Buffer b;
  model::NameTable names;
  ActivityDecoder d(b.port, names);
  b.add(build::api(false, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 60, 3, 1200, 1300));
  b.add(build::api(true, kLaunch13, 60, 3, 1000, 1500));
  build::KernelArgs k;
  k.correlation = 60;
  b.add(build::kernel(k));
  DecodedActivity out;
  b.decodeInto(d, out);
  REQUIRE(out.kernels.size() == 1);
  CHECK(out.kernels[0].launch_start == 1000);
  CHECK(out.kernels[0].launch_end == 1500);
  CHECK(out.api_spans.size() == 2);
  CHECK(d.apiEntries() == 1);
}

TEST_CASE("Unjoined GPU records age out without launch information; API records expire") {
  Buffer b;
  model::NameTable names;
  ActivityDecoder::Options o;
  o.hold_ns = 1000;
  ActivityDecoder d(b.port, names, o);
  build::KernelArgs k;
  k.correlation = 70;
  k.start = 10;
  k.end = 20;
  b.add(build::kernel(k));
  b.add(build::api(true, kLaunch13, 71, 3, 1, 2));
  DecodedActivity out;
  b.decodeInto(d, out, /*now=*/5000);
  CHECK(out.kernels.empty());
  d.age(5500, out); // not yet due
  CHECK(out.kernels.empty());
  CHECK(d.apiEntries() == 1);
  d.age(6001, out);
  REQUIRE(out.kernels.size() == 1);
  CHECK(out.kernels[0].launch_start == 0);
  CHECK(out.kernels[0].thread == 0);
  CHECK(d.stats().unjoined == 1);
  CHECK(d.heldRecords() == 0);
  CHECK(d.apiEntries() == 0);
  // The API record for 71 is gone, so a late kernel for it is held, not joined.
  k.correlation = 71;
  b.add(build::kernel(k));
  out.clear();
  b.decodeInto(d, out, 7000);
  CHECK(out.kernels.empty());
  d.flushHeld(out);
  CHECK(out.kernels.size() == 1);
}

TEST_CASE("The join tables are bounded: held records are emitted, old API records evicted") {
  Buffer b;
  model::NameTable names;
  ActivityDecoder::Options o;
  o.max_held_records = 4;
  o.max_api_entries = 8;
  ActivityDecoder d(b.port, names, o);
  for (uint32_t c = 1; c <= 10; ++c) {
    build::KernelArgs k;
    k.correlation = c;
    b.add(build::kernel(k));
  }
  DecodedActivity out;
  b.decodeInto(d, out);
  CHECK(d.heldRecords() == 4);
  CHECK(out.kernels.size() == 6); // the six oldest, without launch info
  for (uint32_t c = 100; c < 120; ++c)
    b.add(build::api(true, kLaunch13, c, 1, c, c + 1));
  b.decodeInto(d, out);
  CHECK(d.apiEntries() == 8);
  CHECK(d.stats().evicted_api == 12);
}

TEST_CASE("Walk errors and kinds we do not decode are counted") {
  Buffer b;
  model::NameTable names;
  ActivityDecoder d(b.port, names);
  auto marker_data = build::zeroed<CUpti_ActivityMarkerData2>(); // colour and payload: not used
  marker_data.kind = CUPTI_ACTIVITY_KIND_MARKER_DATA;
  b.add(marker_data);
  DecodedActivity out;
  b.decodeInto(d, out);
  CHECK(d.stats().ignored == 1);
  CHECK(d.stats().records == 1);
  // A record header claiming more bytes than the buffer holds.
  uint32_t bogus = 4096;
  std::memcpy(b.storage.data(), &bogus, 4);
  d.decode(b.storage.data(), 64, 0, out);
  CHECK(d.stats().bad_buffers == 1);
}
