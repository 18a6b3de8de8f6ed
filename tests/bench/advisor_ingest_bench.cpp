// How fast the advisor's ingest core routes and decodes batches: the ceiling on the event rate
// one advisor thread can take from the shims.
#include "advisor/ingest/stream_router.h"
#include "transport/codec.h"

#include <benchmark/benchmark.h>

using namespace gpuwise;
using namespace gpuwise::advisor;

namespace {

void BM_RouteKernelBatches(benchmark::State& state) {
  const int per_batch = static_cast<int>(state.range(0));
  const int batches = 64;
  model::NameTable names;
  transport::BatchEncoder enc(names, 42, 1);
  std::vector<model::NameId> ids;
  for (int i = 0; i < 50; ++i)
    ids.push_back(names.intern("kernel_" + std::to_string(i)));
  transport::Hello hello;
  hello.session_id = 42;
  hello.process.pid = 1;
  auto hello_bytes = transport::encodeHello(hello);
  std::vector<std::vector<uint8_t>> messages;
  model::TimeNs t = 1'000'000'000;
  for (int b = 0; b < batches; ++b) {
    for (int i = 0; i < per_batch; ++i) {
      model::KernelExec k;
      k.start = t;
      k.end = t + 1500;
      k.launch_start = t - 4000;
      k.launch_end = t - 3000;
      k.name = ids[static_cast<size_t>(i) % ids.size()];
      k.stream = 7;
      k.grid = {64, 1, 1};
      k.block = {256, 1, 1};
      enc.add(k);
      t += 2000;
    }
    messages.push_back(enc.encode(0, false, t));
    enc.confirm(true);
  }
  size_t bytes = 0;
  for (const auto& m : messages)
    bytes += m.size();
  for (auto _ : state) {
    StreamRouter router([](std::string_view) {});
    router.route(hello_bytes);
    for (const auto& m : messages)
      router.route(m);
    benchmark::DoNotOptimize(router.progress().events);
  }
  state.SetItemsProcessed(state.iterations() * batches * per_batch);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bytes));
}
BENCHMARK(BM_RouteKernelBatches)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
