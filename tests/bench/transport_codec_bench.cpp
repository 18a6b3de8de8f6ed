// Encode/decode throughput and bytes per event for the wire codec.
//   kernels: a steady training loop (tests/transport/steady_loop.h), 10k kernels per batch,
//            after the epoch's first batch (which also carries names and signatures); arguments:
//            distinct launch sites, jitter in per mille (30: the loop's default 3%), protocol
//            written (1: as builds before protocol 2 wrote it, for comparison)
//   copies:  10k host<->device copies per batch with realistic sizes and timing
// Counters: items_per_second (events/s) and bytes_per_kernel / bytes_per_copy on the wire; for
// kernels also where the bytes go, per kernel: fb_raw (the FlatBuffer before the envelope's zstd),
// key (the signature/form column compressed alone), gap, launch, offset, duration (each residual
// column's four planes as they travel: packed sizes, or for raw planes zstd of the column alone).
#include "tests/transport/steady_loop.h"
#include "transport/codec.h"
#include "transport/envelope.h"
#include "transport/schema/gpuwise_generated.h"

#include <benchmark/benchmark.h>
#include <zstd.h>

#include <map>
#include <random>
#include <string>

using namespace gpuwise;
using namespace gpuwise::transport;

namespace {

constexpr size_t kBatch = 10'000;
constexpr int kBatches = 8;

std::vector<std::vector<model::KernelExec>> loopBatches(model::NameTable& names, int distinct,
                                                        double jitter = 0.03) {
  testing::SteadyLoop loop(names, 42, distinct, jitter);
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

size_t zstdSize(const uint8_t* data, size_t n) {
  std::vector<uint8_t> out(ZSTD_compressBound(n));
  const size_t z = ZSTD_compress(out.data(), out.size(), data, n, 1);
  return ZSTD_isError(z) ? n : z;
}

// Where a kernel batch message's bytes go, in bytes per kernel (see the top of this file).
std::map<std::string, double> kernelColumnBytes(const std::vector<uint8_t>& msg) {
  std::map<std::string, double> out;
  EnvelopeReader reader;
  auto opened = reader.open(msg);
  const auto* const* m = std::get_if<const wire::Message*>(&opened);
  const wire::Batch* b = m ? (*m)->body_as_Batch() : nullptr;
  const wire::KernelColumns* c = b ? b->kernels() : nullptr;
  if (!c || !c->key() || c->key()->size() == 0) return out;
  const size_t n = c->key()->size();
  const double per = 1.0 / double(n);
  out["fb_raw"] = double(uint32_t(msg[8]) | uint32_t(msg[9]) << 8 | uint32_t(msg[10]) << 16 |
                         uint32_t(msg[11]) << 24) *
                  per;
  out["key"] = double(zstdSize(reinterpret_cast<const uint8_t*>(c->key()->data()), 4 * n)) * per;
  const char* names[4] = {"gap", "launch", "offset", "duration"};
  for (size_t col = 0; col < 4; ++col) {
    size_t bytes = 0;
    if (const auto* packed = c->residual_planes()) {
      for (size_t p = 4 * col; p < 4 * col + 4; ++p) {
        const uint8_t* h = packed->data() + 4 * p;
        bytes += uint32_t(h[0]) | uint32_t(h[1]) << 8 | uint32_t(h[2]) << 16 | uint32_t(h[3]) << 24;
      }
    } else if (c->residuals()) {
      bytes = zstdSize(c->residuals()->data() + 4 * col * n, 4 * n);
    }
    out[names[col]] = double(bytes) * per;
  }
  return out;
}

template <class T> void addAll(BatchEncoder& enc, const std::vector<T>& v) {
  for (const auto& e : v)
    enc.add(e);
}

template <class T>
void encodeBench(benchmark::State& state, const std::vector<std::vector<T>>& batches,
                 model::NameTable& names, const char* counter, uint32_t protocol) {
  BatchEncoder enc(names, 1, 1);
  enc.writeProtocol(protocol);
  addAll(enc, batches[0]); // the epoch's first batch: names and signatures
  (void)enc.encode(0, false, 0);
  enc.confirm(true);
  size_t bytes = 0, events = 0, i = 0;
  std::vector<uint8_t> last;
  for (auto _ : state) {
    const auto& b = batches[1 + i++ % kBatches];
    addAll(enc, b);
    auto msg = enc.encode(0, false, 0);
    enc.confirm(true);
    bytes += msg.size();
    events += b.size();
    benchmark::DoNotOptimize(msg.data());
    last.swap(msg);
  }
  state.SetItemsProcessed(int64_t(events));
  state.counters[counter] = double(bytes) / double(events);
  if constexpr (std::is_same_v<T, model::KernelExec>)
    for (const auto& [column, per_kernel] : kernelColumnBytes(last))
      state.counters[column] = per_kernel;
}

template <class T>
void decodeBench(benchmark::State& state, const std::vector<std::vector<T>>& batches,
                 model::NameTable& names, uint32_t protocol) {
  BatchEncoder enc(names, 1, 1);
  enc.writeProtocol(protocol);
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
  const auto batches = loopBatches(names, int(state.range(0)), double(state.range(1)) / 1000.0);
  encodeBench(state, batches, names, "bytes_per_kernel", uint32_t(state.range(2)));
}
void BM_DecodeKernels(benchmark::State& state) {
  model::NameTable names;
  const auto batches = loopBatches(names, int(state.range(0)), double(state.range(1)) / 1000.0);
  decodeBench(state, batches, names, uint32_t(state.range(2)));
}
void BM_EncodeCopies(benchmark::State& state) {
  model::NameTable names;
  encodeBench(state, copyBatches(), names, "bytes_per_copy", kProtocolVersion);
}
void BM_DecodeCopies(benchmark::State& state) {
  model::NameTable names;
  decodeBench(state, copyBatches(), names, kProtocolVersion);
}

} // namespace

// {distinct launch sites, jitter per mille, protocol}: the default loop at three sizes, 1% jitter,
// and the default loop and 1% jitter as protocol 1 wrote them.
static void loops(benchmark::internal::Benchmark* b) {
  b->Args({20, 30, 2})->Args({32, 30, 2})->Args({50, 30, 2})->Args({32, 10, 2});
  b->Args({32, 30, 1})->Args({32, 10, 1});
}
BENCHMARK(BM_EncodeKernels)->Apply(loops)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DecodeKernels)->Apply(loops)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_EncodeCopies)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DecodeCopies)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
