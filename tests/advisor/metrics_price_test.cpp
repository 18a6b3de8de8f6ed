// gpuwise_gpu_hour_price_dollars (issue 22, waste by team): each GPU a process uses carries the
// price its report puts on it (advisor/cost/waste_cost.h), so the recording rules of
// containers/kubernetes/monitoring/waste-rules.yaml turn idle seconds into the report's dollars.
// The table's price by model, --gpu-hour-price for every GPU, absent (not 0) for an unknown model.
#include "advisor/analysis/job_analysis.h"
#include "advisor/cost/gpu_prices.h"
#include "advisor/cost/waste_cost.h"
#include "advisor/metrics/exposition_builder.h"
#include "advisor/metrics/metrics_input.h"
#include "tests/advisor/metrics_parse.h"
#include "tests/advisor/trace_builder.h"

#include <catch2/catch.hpp>

using namespace gpuwise;
using namespace gpuwise::advisor;
using namespace gpuwise::advisor::test;

namespace {

// Three processes, one GPU each: an H100 (the table's H100 row), an A100 whose name does not say
// its memory (the 80 GB row, told by its memory) and a GeForce (no row).
model::Trace threeGpus() {
  model::Trace t;
  const std::pair<const char*, uint64_t> gpus[] = {{"NVIDIA H100 80GB HBM3", 80ull << 30},
                                                   {"NVIDIA A100-PCIE", 80ull << 30},
                                                   {"NVIDIA GeForce RTX 4090", 24ull << 30}};
  int64_t pid = 100;
  for (const auto& [name, memory] : gpus) {
    auto p = process(++pid, name);
    p.info.rank = int32_t(pid - 101);
    p.devices[0].memory_total_bytes = memory;
    p.kernels = {kernel(1 * kSec, 2 * kSec), kernel(2500 * kMs, 3 * kSec)};
    t.processes.push_back(std::move(p));
  }
  return t;
}

// The gauge per rank ("" when absent).
std::map<std::string, std::optional<double>> pricesByRank(const std::string& exposition) {
  std::map<std::string, std::optional<double>> out;
  auto m = parseProm(exposition);
  for (const auto& s : m.find("gpuwise_gpu_hour_price_dollars")) {
    std::map<std::string, std::string> labels = s.labels;
    out[labels["rank"]] = s.value;
  }
  return out;
}

// The report's price of each device, by rank.
std::map<std::string, std::optional<double>> reportPrices(const model::Trace& t,
                                                          const CostOptions& options) {
  std::map<std::string, std::optional<double>> out;
  for (const auto& d : computeJobCost(analyzeJob(t), options).devices)
    out[std::to_string(d.rank)] = d.price;
  return out;
}

} // namespace

TEST_CASE("metrics: each GPU's hour is priced as the report prices it") {
  const model::Trace t = threeGpus();
  metrics::ExpositionBuilder b;
  auto prices = pricesByRank(b.build(metrics::buildMetricsInput(t, nullptr)));
  // The GeForce has no price: no series, not a 0 that would make its idle time free.
  REQUIRE(prices.size() == 2);
  auto report = reportPrices(t, {});
  CHECK(report.size() == 3);
  CHECK_FALSE(report["2"]);
  // The table's H100 row, and its A100 80GB row for an A100 whose name does not say 80GB.
  CHECK(*prices["0"] == lookupGpuPrice("NVIDIA H100 80GB HBM3")->usd_per_hour);
  CHECK(*prices["1"] == lookupGpuPrice("NVIDIA A100-SXM4-80GB")->usd_per_hour);
  CHECK(*prices["0"] == *report["0"]);
  CHECK(*prices["1"] == *report["1"]);
}

TEST_CASE("metrics: --gpu-hour-price prices every GPU, the unknown model too") {
  const model::Trace t = threeGpus();
  metrics::AdvisorFigures own;
  own.gpu_hour_price = 2.5;
  metrics::ExpositionBuilder b(own);
  // A later build that says nothing of the price keeps the advisor's.
  auto prices = pricesByRank(b.build(metrics::buildMetricsInput(t, nullptr), {}));
  REQUIRE(prices.size() == 3);
  auto report = reportPrices(t, {.gpu_hour_price = 2.5});
  for (const auto& rank : {"0", "1", "2"}) {
    INFO(rank);
    CHECK(*prices[rank] == 2.5);
    CHECK(*report[rank] == 2.5);
  }
}
