// Encode/decode throughput and bytes per event for the wire codec.
//   kernels: a steady training loop (tests/transport/steady_loop.h), 10k kernels per batch,
//            after the epoch's first batch (which also carries names and signatures)
//   copies:  10k host<->device copies per batch with realistic sizes and timing
// Counters: items_per_second (events/s) and bytes_per_kernel / bytes_per_copy on the wire.
#include "tests/transport/steady_loop.h"
#include "transport/codec.h"

#include <benchmark/benchmark.h>

#include <random>

using namespace gpuwise;
using namespace gpuwise::transport;

namespace {

constexpr size_t kBatch = 10'000;
constexpr int kBatches = 8;

std::vector<std::vector<model::KernelExec>> loopBatches(model::NameTable& names, int distinct) {
  testing::SteadyLoop loop(names, 42, distinct);
  std::vector<std::vector<model::KernelExec>> out(kBatches + 1);
  for (auto& b : out)
    loop.next(kBatch, b);
  return out;
}

std::vector<std::vector<model::Copy>> copyBatches() {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> jitter(1.0, 0.03);
  const uint64_t sizes[] = {4u << 20, 64u << 10, 512, 16u << 20, 1u << 20};
  int64_t host = 3'600'000'000'000'000;
  std::vector<std::vector<model::Copy>> out(kBatches + 1);
  for (auto& batch : out) {
    for (size_t i = 0; i < kBatch; ++i) {
      model::Copy c;
      c.bytes = sizes[i % 5];
      c.direction =
          i % 5 == 2 ? model::CopyDirection::DeviceToHost : model::CopyDirection::HostToDevice;
      c.src = c.direction == model::CopyDirection::HostToDevice ? model::MemoryKind::Pinned
                                                                : model::MemoryKind::Device;
      c.dst = c.direction == model::CopyDirection::HostToDevice ? model::MemoryKind::Device
                                                                : model::MemoryKind::Pageable;
      c.async = i % 5 != 2;
      c.device = 0;
      c.stream = 13;
      c.thread = 4242;
      host += int64_t(20'000 * jitter(rng));
      c.call_start = host;
      c.call_end = host + int64_t(6'000 * jitter(rng));
      c.start = c.call_end + int64_t(2'000 * jitter(rng));
      c.end = c.start + int64_t(double(c.bytes) / 25.0 * jitter(rng)) + 1500; // ~25 GB/s
      host = c.call_end;
      batch.push_back(c);
    }
  }
  return out;
}

template <class T> void addAll(BatchEncoder& enc, const std::vector<T>& v) {
  for (const auto& e : v)
    enc.add(e);
}

template <class T>
void encodeBench(benchmark::State& state, const std::vector<std::vector<T>>& batches,
                 model::NameTable& names, const char* counter) {
  BatchEncoder enc(names, 1, 1);
  addAll(enc, batches[0]); // the epoch's first batch: names and signatures
  (void)enc.encode(0, false, 0);
  enc.confirm(true);
  size_t bytes = 0, events = 0, i = 0;
  for (auto _ : state) {
    const auto& b = batches[1 + i++ % kBatches];
    addAll(enc, b);
    auto msg = enc.encode(0, false, 0);
    enc.confirm(true);
    bytes += msg.size();
    events += b.size();
    benchmark::DoNotOptimize(msg.data());
  }
  state.SetItemsProcessed(int64_t(events));
  state.counters[counter] = double(bytes) / double(events);
}

template <class T>
void decodeBench(benchmark::State& state, const std::vector<std::vector<T>>& batches,
                 model::NameTable& names) {
  BatchEncoder enc(names, 1, 1);
  std::vector<std::vector<uint8_t>> msgs;
  for (const auto& b : batches) {
    addAll(enc, b);
    msgs.push_back(enc.encode(0, false, 0));
    enc.confirm(true);
  }
  model::NameTable rnames;
  MessageDecoder dec(rnames);
  (void)dec.decode(msgs[0]);
  size_t events = 0, i = 0;
  for (auto _ : state) {
    auto r = dec.decode(msgs[1 + i++ % kBatches]);
    const auto* b = r ? std::get_if<Batch>(&*r) : nullptr;
    if (!b) {
      state.SkipWithError("decode failed");
      return;
    }
    events += b->eventCount();
    benchmark::DoNotOptimize(b);
  }
  state.SetItemsProcessed(int64_t(events));
}

void BM_EncodeKernels(benchmark::State& state) {
  model::NameTable names;
  const auto batches = loopBatches(names, int(state.range(0)));
  encodeBench(state, batches, names, "bytes_per_kernel");
}
void BM_DecodeKernels(benchmark::State& state) {
  model::NameTable names;
  const auto batches = loopBatches(names, int(state.range(0)));
  decodeBench(state, batches, names);
}
void BM_EncodeCopies(benchmark::State& state) {
  model::NameTable names;
  encodeBench(state, copyBatches(), names, "bytes_per_copy");
}
void BM_DecodeCopies(benchmark::State& state) {
  model::NameTable names;
  decodeBench(state, copyBatches(), names);
}

} // namespace

BENCHMARK(BM_EncodeKernels)->Arg(20)->Arg(32)->Arg(50)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DecodeKernels)->Arg(20)->Arg(32)->Arg(50)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_EncodeCopies)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DecodeCopies)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
