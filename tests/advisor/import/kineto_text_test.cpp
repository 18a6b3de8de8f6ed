#include "advisor/import/kineto_text.h"
#include "profiler/model/sync_names.h"

#include <catch2/catch.hpp>

using namespace gpuwise::advisor;
using gpuwise::model::CopyDirection;
using gpuwise::model::MemoryKind;
using gpuwise::model::SyncKind;

namespace {
int64_t ns(std::string_view token) {
  int64_t v = 0;
  REQUIRE(parseMicrosToNs(token, &v));
  return v;
}
} // namespace

TEST_CASE("timestamps: integer microseconds become nanoseconds") {
  CHECK(ns("0") == 0);
  CHECK(ns("100") == 100000);
  CHECK(ns("-5") == -5000);
  // A 2021 trace's epoch timestamp: exact, no float on the way.
  CHECK(ns("1623142623460111") == 1623142623460111000);
}

TEST_CASE("timestamps: float microseconds keep their nanosecond fraction exactly") {
  CHECK(ns("41.768") == 41768);
  CHECK(ns("1.5") == 1500);
  CHECK(ns("0.001") == 1);
  // 64-bit epochs with a ns fraction: a double has 53 bits and would be off by up to 128 ns here.
  CHECK(ns("1712195495505543.2") == 1712195495505543200);
  CHECK(ns("1712195495519695.8") == 1712195495519695800);
  CHECK(ns("3605057591214.947") == 3605057591214947);
  CHECK(ns("9223372036854775.807") == 9223372036854775807); // INT64_MAX ns
}

TEST_CASE("timestamps: sub-nanosecond digits round to the nearest ns, ties away from zero") {
  CHECK(ns("1.0004") == 1000);
  CHECK(ns("1.0005") == 1001);
  CHECK(ns("1.00049999") == 1000);
  CHECK(ns("-1.0005") == -1001);
  CHECK(ns("1414456661820.8901") == 1414456661820890);
  CHECK(ns("1414456661820.8905") == 1414456661820891);
  // More digits than 64 bits hold: the general path.
  CHECK(ns("1712195495505543.2004999999") == 1712195495505543200);
  CHECK(ns("1712195495505543.2005000001") == 1712195495505543201);
}

TEST_CASE("timestamps: exponents, quotes, and what is rejected") {
  CHECK(ns("1e3") == 1000000);
  CHECK(ns("1.5E-3") == 2); // 1.5 ns rounds away from zero
  CHECK(ns("2.5e+2") == 250000);
  CHECK(ns("\"12\"") == 12000);
  CHECK(ns("12 ") == 12000);
  int64_t v;
  CHECK_FALSE(parseMicrosToNs("", &v));
  CHECK_FALSE(parseMicrosToNs("abc", &v));
  CHECK_FALSE(parseMicrosToNs("1.2.3", &v));
  CHECK_FALSE(parseMicrosToNs("1e", &v));
  CHECK_FALSE(parseMicrosToNs("null", &v));
  CHECK_FALSE(parseMicrosToNs("9223372036854776", &v)); // overflows int64 ns
}

TEST_CASE("loose integers: numbers, quoted numbers, hex, trailing numbers of labels") {
  int64_t v = 0;
  CHECK((parseLooseInt("7", &v) && v == 7));
  CHECK((parseLooseInt("\"108\"", &v) && v == 108));
  CHECK((parseLooseInt("\"0x0\"", &v) && v == 0));
  CHECK((parseLooseInt("0x7fda0e810200", &v) && v == 0x7fda0e810200));
  CHECK((parseLooseInt("7.0", &v) && v == 7));
  CHECK_FALSE(parseLooseInt("\"stream 7\"", &v));
  CHECK((parseTrailingInt("stream 7", &v) && v == 7));
  CHECK((parseTrailingInt("\"25738\"", &v) && v == 25738));
  CHECK_FALSE(parseTrailingInt("PyTorch Profiler", &v));
  CHECK_FALSE(parseTrailingInt("Spans", &v));
}

TEST_CASE("memcpy names give direction and memory kinds") {
  auto m = parseMemcpyName("Memcpy HtoD (Pageable -> Device)");
  CHECK(m.ok);
  CHECK(m.direction == CopyDirection::HostToDevice);
  CHECK(m.src == MemoryKind::Pageable);
  CHECK(m.dst == MemoryKind::Device);
  m = parseMemcpyName("Memcpy DtoH (Device -> Pinned)");
  CHECK(m.direction == CopyDirection::DeviceToHost);
  CHECK(m.src == MemoryKind::Device);
  CHECK(m.dst == MemoryKind::Pinned);
  m = parseMemcpyName("Memcpy DtoD (Device -> Device)");
  CHECK(m.direction == CopyDirection::DeviceToDevice);
  m = parseMemcpyName("Memcpy PtoP (Device -> Device)");
  CHECK(m.direction == CopyDirection::PeerToPeer);
  m = parseMemcpyName("Memcpy HtoH (Pinned -> Pageable)");
  CHECK(m.direction == CopyDirection::HostToHost);
  CHECK(m.dst == MemoryKind::Pageable);
  m = parseMemcpyName("Memcpy HtoA (Pinned -> Array)");
  CHECK(m.direction == CopyDirection::HostToDevice);
  CHECK(m.dst == MemoryKind::Array);
  m = parseMemcpyName("Memcpy DtoH (Managed Static -> Device Static)");
  CHECK(m.src == MemoryKind::Managed);
  CHECK(m.dst == MemoryKind::Device);
  // ROCm says "Host" without saying pinned or pageable.
  m = parseMemcpyName("Memcpy HtoD (Host -> Device)");
  CHECK(m.direction == CopyDirection::HostToDevice);
  CHECK(m.src == MemoryKind::Unknown);
  m = parseMemcpyName("Memcpy HtoD");
  CHECK(m.ok);
  CHECK(m.direction == CopyDirection::HostToDevice);
  CHECK(m.src == MemoryKind::Unknown);
  CHECK_FALSE(parseMemcpyName("Memset (Device)").ok);
  CHECK(parseMemsetName("Memset (Device)") == MemoryKind::Device);
  CHECK(parseMemsetName("Memset (Unknown)") == MemoryKind::Unknown);
  CHECK(parseMemsetName("Memset (Pinned)") == MemoryKind::Pinned);
}

TEST_CASE("synchronising calls map to their sync kind") {
  CHECK(syncKindForApi("cudaDeviceSynchronize") == SyncKind::Device);
  CHECK(syncKindForApi("cuCtxSynchronize") == SyncKind::Device);
  CHECK(syncKindForApi("hipDeviceSynchronize") == SyncKind::Device);
  CHECK(syncKindForApi("cudaStreamSynchronize") == SyncKind::Stream);
  CHECK(syncKindForApi("cuStreamSynchronize") == SyncKind::Stream);
  CHECK(syncKindForApi("cudaEventSynchronize") == SyncKind::Event);
  CHECK(syncKindForApi("cudaMemcpy") == SyncKind::SyncCopy);
  CHECK(syncKindForApi("cudaMemcpy2D") == SyncKind::SyncCopy);
  CHECK(syncKindForApi("cuMemcpyDtoH_v2") == SyncKind::SyncCopy);
  CHECK(syncKindForApi("hipMemcpyWithStream") == SyncKind::SyncCopy);
  CHECK(syncKindForApi("cudaMemcpyAsync") == SyncKind::Unknown);
  CHECK(syncKindForApi("cuMemcpyHtoDAsync_v2") == SyncKind::Unknown);
  CHECK(syncKindForApi("cudaStreamWaitEvent") ==
        SyncKind::Unknown); // the device waits, not the host
  CHECK(syncKindForApi("cudaEventQuery") == SyncKind::Unknown);
  CHECK(syncKindForApi("cudaLaunchKernel") == SyncKind::Unknown);
  CHECK(syncKindForCudaSync("Context Sync") == SyncKind::Device);
  CHECK(syncKindForCudaSync("Stream Sync") == SyncKind::Stream);
  CHECK(syncKindForCudaSync("Event Sync") == SyncKind::Event);
  CHECK(syncKindForCudaSync("Stream Wait Event") == SyncKind::StreamWaitEvent);
  for (auto k : {SyncKind::Device, SyncKind::Stream, SyncKind::Event, SyncKind::StreamWaitEvent,
                 SyncKind::SyncCopy})
    CHECK(syncKindForCudaSync(gpuwise::model::kinetoSyncName(k)) == k);
  CHECK(isAsyncApi("cudaMemcpyAsync"));
  CHECK_FALSE(isAsyncApi("cudaMemcpy"));
}

TEST_CASE("steps, data loaders and collectives are recognised by name") {
  CHECK(profilerStepNumber("ProfilerStep#5") == 5);
  CHECK(profilerStepNumber("ProfilerStep#1009") == 1009);
  CHECK(profilerStepNumber("ProfilerStep#") == -1);
  CHECK(profilerStepNumber("ProfilerStep#5a") == -1);
  CHECK(profilerStepNumber("ProfilerStep") == -1);
  CHECK(profilerStepNumber("aten::add") == -1);
  CHECK(isDataLoaderRange("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"));
  CHECK(isDataLoaderRange("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__"));
  CHECK(isDataLoaderRange("enumerate(DataLoader)#_DataLoaderIter.__next__"));
  CHECK(isDataLoaderRange("enumerate(DataPipe)#ShufflerIterDataPipe.__next__"));
  CHECK_FALSE(isDataLoaderRange("DataLoader"));
  CHECK(isPythonDataLoaderNext("torch/utils/data/dataloader.py(703): __next__"));
  CHECK_FALSE(isPythonDataLoaderNext("torch/utils/data/dataloader.py(762): _next_data"));
  CHECK(isCommunicationKernel("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)"));
  CHECK(isCommunicationKernel("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)"));
  CHECK(isCommunicationKernel("void ncclKernel_SendRecv(ncclDevComm*)"));
  CHECK_FALSE(isCommunicationKernel("volta_sgemm_128x64_nn"));
}
