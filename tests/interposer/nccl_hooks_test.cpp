// The NCCL hooks, linked into this test and forwarding into FakeNccl: every collective becomes one
// Collective record with its kind, element type, NCCL's in/out counts, stream, device, and its
// communicator's job-wide id, size and rank (learned at creation, never asked on the collective
// path), numbered per communicator from 1; results pass through; NCCL's own nested calls are
// recorded once; a communicator the hooks never saw created is recorded as unknown.
#include "fake_batch_sink.h"
#include "fake_nccl/fake_nccl.h"
#include "interposer/nccl_comm_table.h"
#include "interposer/nccl_declarations.h"
#include "interposer/recorder.h"
#include "interposer/runtime.h"
#include "profiler/cupti/fake_cupti_port.h"
#include "profiler/nvml/fake_nvml_port.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <thread>
#include <vector>

using namespace gpuwise;
using namespace gpuwise::interposer;
using gpuwise::interposer::testing::FakeBatchSink;
using nccl::Comm;
using nccl::Result;
using Kind = model::CollectiveKind;
using model::ElementType;

extern "C" {
Result ncclAllReduce(const void*, void*, size_t, int, int, Comm, cudaStream_t);
Result ncclAllGather(const void*, void*, size_t, int, Comm, cudaStream_t);
Result ncclReduceScatter(const void*, void*, size_t, int, int, Comm, cudaStream_t);
Result ncclBroadcast(const void*, void*, size_t, int, int, Comm, cudaStream_t);
Result ncclBcast(void*, size_t, int, int, Comm, cudaStream_t);
Result ncclReduce(const void*, void*, size_t, int, int, int, Comm, cudaStream_t);
Result ncclAlltoAll(const void*, void*, size_t, int, Comm, cudaStream_t);
Result ncclSend(const void*, size_t, int, int, Comm, cudaStream_t);
Result ncclRecv(void*, size_t, int, int, Comm, cudaStream_t);
Result ncclCommInitRank(Comm*, int, nccl::UniqueId, int);
Result ncclCommInitRankConfig(Comm*, int, nccl::UniqueId, int, nccl::Config*);
Result ncclCommInitAll(Comm*, int, const int*);
Result ncclCommSplit(Comm, int, int, Comm*, nccl::Config*);
Result ncclCommDestroy(Comm);
}

namespace {

// ncclDataType_t and ncclRedOp_t values.
constexpr int kInt8 = 0, kUint8 = 1, kInt32 = 2, kFloat16 = 6, kFloat32 = 7, kFloat64 = 8,
              kBfloat16 = 9;
constexpr int kSum = 0;

FakeBatchSink* g_sink = nullptr;

void startWith(bool disabled = false) {
  REQUIRE(resetForTest(std::chrono::seconds(10)));
  Config c;
  c.endpoint = "fake:";
  c.cupti = false;
  c.batch_ms = 5;
  c.ring_events = 1024;
  c.disabled = disabled;
  c.log = LogLevel::Quiet;
  ShimDeps d;
  d.make_sink = [](const Config&, const model::NameTable& names, uint64_t, int64_t) {
    auto s = std::make_unique<FakeBatchSink>(&names);
    g_sink = s.get();
    return std::unique_ptr<BatchSink>(std::move(s));
  };
  d.make_nvml_port = [] {
    return std::unique_ptr<profiler::NvmlPort>(std::make_unique<profiler::FakeNvmlPort>());
  };
  d.make_cupti_port = [] {
    return std::unique_ptr<profiler::CuptiPort>(std::make_unique<profiler::FakeCuptiPort>());
  };
  g_sink = nullptr;
  configure(c, d);
  if (!disabled) startShim();
}

struct Received {
  std::vector<model::Collective> collectives;
  std::vector<std::string> api_names;
};
Received received() {
  REQUIRE(drainAndWait(std::chrono::seconds(10), 2));
  REQUIRE(g_sink);
  return g_sink->with([](auto& s) {
    Received r;
    for (const auto& b : s.batches) {
      r.collectives.insert(r.collectives.end(), b.batch.collectives.begin(),
                           b.batch.collectives.end());
      r.api_names.insert(r.api_names.end(), b.api_names.begin(), b.api_names.end());
    }
    return r;
  });
}

nccl::UniqueId uniqueId(const char* text) {
  nccl::UniqueId id{};
  std::strncpy(id.internal, text, sizeof id.internal - 1);
  return id;
}

cudaStream_t streamHandle(uintptr_t v) {
  return reinterpret_cast<cudaStream_t>(v);
}

} // namespace

TEST_CASE("Each NCCL call is one Collective record: kind, type, counts, communicator, sequence") {
  startWith();
  Comm comm = nullptr;
  REQUIRE(ncclCommInitRank(&comm, 4, uniqueId("job-a"), 2) == nccl::kSuccess);
  const long asked = fakeNcclCalls("ncclCommCount") + fakeNcclCalls("ncclCommUserRank");
  const cudaStream_t s1 = streamHandle(0x5000), s2 = streamHandle(0x6000);
  for (int i = 0; i < 3; ++i)
    CHECK(ncclAllReduce(nullptr, nullptr, 1000, kFloat32, kSum, comm, s1) == nccl::kSuccess);
  CHECK(ncclAllGather(nullptr, nullptr, 10, kBfloat16, comm, s1) == nccl::kSuccess);
  CHECK(ncclReduceScatter(nullptr, nullptr, 10, kFloat16, kSum, comm, s1) == nccl::kSuccess);
  CHECK(ncclBroadcast(nullptr, nullptr, 5, kInt8, 0, comm, s2) == nccl::kSuccess);
  CHECK(ncclBcast(nullptr, 6, kFloat64, 0, comm, s2) == nccl::kSuccess);
  CHECK(ncclReduce(nullptr, nullptr, 7, kUint8, kSum, 0, comm, s2) == nccl::kSuccess);
  CHECK(ncclAlltoAll(nullptr, nullptr, 8, kInt32, comm, s2) == nccl::kSuccess);
  CHECK(ncclSend(nullptr, 9, kFloat32, 1, comm, s1) == nccl::kSuccess);
  CHECK(ncclRecv(nullptr, 11, kFloat32, 3, comm, s1) == nccl::kSuccess);
  // The library's answer is passed through; the failed call stays visible as an API call.
  CHECK(ncclAllReduce(nullptr, nullptr, kFakeNcclFailCount, kFloat32, kSum, comm, s1) == 4);
  // Size and rank were learned at init: the collective path never asks the library.
  CHECK(fakeNcclCalls("ncclCommCount") + fakeNcclCalls("ncclCommUserRank") == asked);
  CHECK(fakeNcclCalls("ncclBroadcast") >= 2); // ncclBcast reached it through the export

  const Received r = received();
  CHECK(std::count(r.api_names.begin(), r.api_names.end(), "ncclAllReduce") == 1);
  REQUIRE(r.collectives.size() == 11); // ncclBcast's nested ncclBroadcast is not a second one
  const auto& c = r.collectives;
  const Kind kinds[] = {Kind::AllReduce,     Kind::AllReduce, Kind::AllReduce, Kind::AllGather,
                        Kind::ReduceScatter, Kind::Broadcast, Kind::Broadcast, Kind::Reduce,
                        Kind::AllToAll,      Kind::Send,      Kind::Recv};
  for (size_t i = 0; i < c.size(); ++i) {
    INFO("record " << i);
    CHECK(c[i].kind == kinds[i]);
    CHECK(c[i].communicator == c[0].communicator);
    CHECK(c[i].group_size == 4);
    CHECK(c[i].group_rank == 2);
    CHECK(c[i].device == 3); // ncclCommCuDevice's answer at init
    CHECK(c[i].thread == c[0].thread);
    CHECK(c[i].start <= c[i].end);
    CHECK(c[i].sequence == (i < 9 ? i + 1 : 0)); // send/recv are not numbered
    CHECK(c[i].peer == (i == 9 ? 1 : i == 10 ? 3 : -1));
  }
  CHECK(c[0].communicator != 0);
  CHECK(c[0].stream != 0);
  CHECK(c[1].stream == c[0].stream);
  CHECK(c[5].stream != c[0].stream);
  CHECK(c[0].element == ElementType::Float32);
  CHECK(c[0].in_count == 1000);
  CHECK(c[0].out_count == 1000);
  CHECK(c[0].bytes() == 4000);
  // All-gather: the output is count x ranks; reduce-scatter: the input.
  CHECK(c[3].element == ElementType::BFloat16);
  CHECK((c[3].in_count == 10 && c[3].out_count == 40));
  CHECK(c[3].bytes() == 80);
  CHECK(c[4].element == ElementType::Float16);
  CHECK((c[4].in_count == 40 && c[4].out_count == 10));
  CHECK(c[5].element == ElementType::Int8);
  CHECK(c[6].element == ElementType::Float64);
  CHECK(c[6].bytes() == 48);
  CHECK(c[7].element == ElementType::Uint8);
  CHECK(c[8].element == ElementType::Int32);
  CHECK((c[8].in_count == 32 && c[8].out_count == 32));
  CHECK((c[9].in_count == 9 && c[9].out_count == 0));
  CHECK((c[10].in_count == 0 && c[10].out_count == 11));
}

TEST_CASE("Ranks of one communicator share its id; a split's id is the same on its members") {
  startWith();
  Comm rank0 = nullptr, rank1 = nullptr, other = nullptr;
  REQUIRE(ncclCommInitRank(&rank0, 2, uniqueId("job-b"), 0) == nccl::kSuccess);
  REQUIRE(ncclCommInitRankConfig(&rank1, 2, uniqueId("job-b"), 1, nullptr) == nccl::kSuccess);
  REQUIRE(ncclCommInitRank(&other, 2, uniqueId("job-c"), 0) == nccl::kSuccess);
  Comm split0 = nullptr, split1 = nullptr, none = nullptr;
  REQUIRE(ncclCommSplit(rank0, 7, 0, &split0, nullptr) == nccl::kSuccess);
  REQUIRE(ncclCommSplit(rank1, 7, 1, &split1, nullptr) == nccl::kSuccess);
  REQUIRE(ncclCommSplit(rank0, -1, 0, &none, nullptr) == nccl::kSuccess); // NCCL_SPLIT_NOCOLOR
  CHECK(none == nullptr);
  for (Comm comm : {rank0, rank1, other, split0, split1})
    REQUIRE(ncclAllReduce(nullptr, nullptr, 1, kFloat32, kSum, comm, nullptr) == nccl::kSuccess);
  const auto c = received().collectives;
  REQUIRE(c.size() == 5);
  CHECK(c[0].communicator == c[1].communicator);
  CHECK(c[2].communicator != c[0].communicator);
  CHECK((c[0].group_rank == 0 && c[1].group_rank == 1));
  CHECK(c[3].communicator == c[4].communicator);
  CHECK(c[3].communicator != c[0].communicator);
  CHECK(c[3].group_size == 1); // the fake's split halves the parent (asked once, at the split)
  CHECK(c[4].group_rank == 1);
  for (const auto& r : c)
    CHECK(r.sequence == 1);
}

TEST_CASE("ncclCommInitAll's communicators share one id, with one rank per device") {
  startWith();
  Comm comms[3] = {};
  const int devices[3] = {0, 2, 5};
  REQUIRE(ncclCommInitAll(comms, 3, devices) == nccl::kSuccess);
  for (Comm comm : comms)
    REQUIRE(ncclAllReduce(nullptr, nullptr, 2, kFloat32, kSum, comm, nullptr) == nccl::kSuccess);
  const auto c = received().collectives;
  REQUIRE(c.size() == 3);
  for (int i = 0; i < 3; ++i) {
    CHECK(c[size_t(i)].communicator == c[0].communicator);
    CHECK(c[size_t(i)].group_size == 3);
    CHECK(c[size_t(i)].group_rank == i);
    CHECK(c[size_t(i)].device == uint32_t(devices[i]));
  }
}

TEST_CASE("A communicator the hooks never saw created is recorded with what is known") {
  startWith();
  Comm unseen = fakeNcclMakeComm(8, 5, 0);
  REQUIRE(ncclAllGather(nullptr, nullptr, 16, kFloat32, unseen, nullptr) == nccl::kSuccess);
  const auto c = received().collectives;
  REQUIRE(c.size() == 1);
  CHECK(c[0].communicator != 0);
  CHECK(c[0].group_size == -1);
  CHECK(c[0].group_rank == -1);
  CHECK(c[0].sequence == 0);
  CHECK(c[0].in_count == 16);
  CHECK(c[0].out_count == 0); // the gathered size needs the communicator's size
}

TEST_CASE("A destroyed communicator's address taken by a new one starts a new count") {
  startWith();
  Comm comm = nullptr;
  REQUIRE(ncclCommInitRank(&comm, 2, uniqueId("job-d"), 0) == nccl::kSuccess);
  REQUIRE(ncclAllReduce(nullptr, nullptr, 1, kFloat32, kSum, comm, nullptr) == nccl::kSuccess);
  REQUIRE(ncclCommDestroy(comm) == nccl::kSuccess);
  // The same address again, with another id and size (as an allocator reusing the memory would).
  NcclCommTable::Facts f;
  f.id = 42;
  f.size = 8;
  f.rank = 7;
  ncclComms().add(comm, f, true);
  REQUIRE(ncclAllReduce(nullptr, nullptr, 1, kFloat32, kSum, comm, nullptr) == nccl::kSuccess);
  const auto c = received().collectives;
  REQUIRE(c.size() == 2);
  CHECK((c[0].group_size == 2 && c[0].sequence == 1)); // resolved after the destroy
  CHECK((c[1].communicator == 42 && c[1].group_size == 8 && c[1].sequence == 1));
}

TEST_CASE("Disabled: the NCCL hooks only forward") {
  startWith(/*disabled=*/true);
  Comm comm = nullptr;
  const long before = fakeNcclCalls("ncclAllReduce");
  REQUIRE(ncclCommInitRank(&comm, 2, uniqueId("job-e"), 1) == nccl::kSuccess);
  CHECK(ncclAllReduce(nullptr, nullptr, 1, kFloat32, kSum, comm, nullptr) == nccl::kSuccess);
  CHECK(fakeNcclCalls("ncclAllReduce") == before + 1);
  CHECK(ncclComms().find(comm) == NcclCommTable::kNoSlot);
  CHECK(shimStatus().mode == kModeOff);
}

TEST_CASE("The communicator table: lock-free lookups, never-reused slots, a bounded capacity") {
  static NcclCommTable table; // 1024 slots: not on the stack
  std::vector<std::unique_ptr<int>> comms;
  NcclCommTable::Facts f;
  f.size = 2;
  for (uint32_t i = 0; i < NcclCommTable::kSlots; ++i) {
    comms.push_back(std::make_unique<int>(int(i)));
    f.id = i + 1;
    REQUIRE(table.add(comms.back().get(), f, true) != NcclCommTable::kNoSlot);
  }
  int extra = 0;
  CHECK(table.add(&extra, f, true) == NcclCommTable::kNoSlot);
  CHECK(table.untracked() == 1);
  CHECK(table.find(&extra) == NcclCommTable::kNoSlot);
  for (uint32_t i = 0; i < NcclCommTable::kSlots; i += 97) {
    const uint16_t slot = table.find(comms[i].get());
    REQUIRE(slot != NcclCommTable::kNoSlot);
    CHECK(table.facts(slot).id == i + 1);
  }
  // Sequences from concurrent threads: every number handed out once.
  const uint16_t slot = table.find(comms[3].get());
  std::vector<uint64_t> seen[4];
  std::vector<std::thread> threads;
  for (auto& s : seen)
    threads.emplace_back([&s, slot] {
      for (int i = 0; i < 1000; ++i)
        s.push_back(table.nextSequence(slot));
    });
  for (auto& t : threads)
    t.join();
  std::vector<uint64_t> all;
  for (auto& s : seen)
    all.insert(all.end(), s.begin(), s.end());
  std::sort(all.begin(), all.end());
  REQUIRE(all.size() == 4000);
  CHECK(all.front() == 1);
  CHECK(all.back() == 4000);
  CHECK(std::adjacent_find(all.begin(), all.end()) == all.end());
  table.remove(comms[3].get());
  CHECK(table.find(comms[3].get()) == NcclCommTable::kNoSlot);
  CHECK(table.facts(slot).id == 4); // still readable for events recorded before
}
