// How long the advisor takes to analyse a large job: a synthetic process with kernels on four
// overlapping streams, copies and syncs, as a long CUPTI-tier training run produces.
#include "advisor/analysis/job_analysis.h"
#include "advisor/report/report_json.h"
#include "advisor/rules/rule_set.h"

#include <benchmark/benchmark.h>

using namespace gpuwise;
using namespace gpuwise::advisor;

namespace {

model::Trace syntheticTrace(int64_t kernels) {
  model::Trace t;
  auto& p = t.processes.emplace_back();
  p.info.pid = 1;
  p.devices.push_back({.index = 0, .name = "NVIDIA H100 80GB HBM3"});
  std::vector<model::NameId> names;
  for (int i = 0; i < 200; ++i)
    names.push_back(p.names.intern("_Z6kernelILi" + std::to_string(i) + "EEvPf"));
  p.kernels.reserve(kernels);
  model::TimeNs t0 = 1'000'000'000;
  for (int64_t i = 0; i < kernels; ++i) {
    model::KernelExec k;
    k.stream = 7 + static_cast<uint32_t>(i % 4);
    k.start = t0 + i * 2000 + (i % 4) * 700;
    k.end = k.start + 1500 + (i % 13) * 100;
    k.name = names[i % names.size()];
    k.grid = {static_cast<uint32_t>(64 + i % 3), 1, 1};
    k.block = {256, 1, 1};
    p.kernels.push_back(k);
    if (i % 100 == 0) {
      model::Copy c;
      c.start = k.start;
      c.end = k.start + 50'000;
      c.bytes = 4 << 20;
      c.direction = model::CopyDirection::HostToDevice;
      c.src = (i % 200 == 0) ? model::MemoryKind::Pageable : model::MemoryKind::Pinned;
      c.stream = 20;
      c.async = true;
      p.copies.push_back(c);
      p.syncs.push_back({.start = k.start,
                         .end = k.start + 30'000,
                         .thread = 1,
                         .kind = model::SyncKind::Stream});
    }
  }
  return t;
}

void BM_AnalyzeJob(benchmark::State& state) {
  auto t = syntheticTrace(state.range(0));
  for (auto _ : state) {
    auto a = analyzeJob(t);
    benchmark::DoNotOptimize(a);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(t.processes[0].eventCount()));
}
BENCHMARK(BM_AnalyzeJob)->Arg(100'000)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

void BM_TimelineOnly(benchmark::State& state) {
  auto t = syntheticTrace(state.range(0));
  for (auto _ : state) {
    auto r = analyzeTimeline(t);
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_TimelineOnly)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

void BM_RulesAndJsonReport(benchmark::State& state) {
  auto t = syntheticTrace(100'000);
  auto a = analyzeJob(t);
  for (auto _ : state) {
    auto recs = recommend(a, &t);
    auto j = buildReportJson({a, recs}).dump();
    benchmark::DoNotOptimize(j);
  }
}
BENCHMARK(BM_RulesAndJsonReport)->Unit(benchmark::kMicrosecond);

} // namespace

BENCHMARK_MAIN();
