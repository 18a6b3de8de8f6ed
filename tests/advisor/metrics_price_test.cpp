// gpuwise_gpu_hour_price_dollars (issue 22, waste by team): each GPU a process uses carries the
// price its report puts on it (advisor/cost/waste_cost.h), so the recording rules of
// containers/kubernetes/monitoring/waste-rules.yaml turn idle seconds into the report's dollars.
// The table's price by model, --gpu-hour-price for every GPU, absent (not 0) for an unknown model;
// --gpu-price CLASS=USD prices that class alike in the report's cost section, its gpu_types table
// and the gauge (one price per class), below --gpu-hour-price.
#include "advisor/analysis/job_analysis.h"
#include "advisor/cli/report_output.h"
#include "advisor/cost/gpu_prices.h"
#include "advisor/cost/waste_cost.h"
#include "advisor/metrics/exposition_builder.h"
#include "advisor/metrics/metrics_input.h"
#include "tests/advisor/metrics_parse.h"
#include "tests/advisor/trace_builder.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

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

// What one H100 job's report (through produceReport, as `gpuwise report` writes it) and the gauge
// put on its GPU's hour, given the flags' prices.
struct JobPrices {
  nlohmann::json cost_price, device_price, price_source, price_model, class_price, class_current;
  std::optional<double> gauge;
};

JobPrices pricesOfH100Job(const GpuTypeOptions& gpu_type, std::optional<double> hour_price) {
  model::Trace t;
  auto p = process(101, "NVIDIA H100 80GB HBM3");
  p.info.rank = 0;
  p.kernels = {kernel(1 * kSec, 2 * kSec), kernel(2500 * kMs, 3 * kSec)};
  t.processes.push_back(std::move(p));

  namespace fs = std::filesystem;
  const fs::path json_path =
      fs::temp_directory_path() / ("gpuwise_price_test_" + std::to_string(getpid()) + ".json");
  ReportTargets targets;
  targets.json_path = json_path.string();
  targets.cost.gpu_hour_price = hour_price;
  targets.gpu_type = gpu_type;
  std::ostringstream summary;
  std::string error;
  REQUIRE(produceReport(t, {}, targets, summary, &error));
  std::ifstream in(json_path);
  const auto report = nlohmann::json::parse(in);
  fs::remove(json_path);

  JobPrices out;
  const auto& cost = report.at("cost");
  out.cost_price = cost.at("gpu_hour_price");
  out.device_price = cost.at("devices").at(0).at("gpu_hour_price");
  out.price_source = cost.at("price_source");
  out.price_model = cost.at("devices").at(0).at("price_model");
  for (const auto& c : report.at("gpu_types").at("classes"))
    if (c.at("gpu") == "H100 SXM") {
      out.class_price = c.at("usd_per_hour");
      out.class_current = c.at("current");
    }

  metrics::AdvisorFigures own; // as `gpuwise advisor` sets it from the same flags
  own.gpu_hour_price = hour_price;
  own.gpu_class_prices = gpu_type.prices.by_class;
  metrics::ExpositionBuilder b(own);
  out.gauge = pricesByRank(b.build(metrics::buildMetricsInput(t, nullptr)))["0"];
  return out;
}

} // namespace

TEST_CASE("--gpu-price for the job's own class: cost, gpu_types and the gauge agree") {
  const double table = lookupGpuPrice("NVIDIA H100 80GB HBM3")->usd_per_hour;
  REQUIRE(table != 2.10);

  GpuTypeOptions flags; // `--gpu-price "H100 SXM=2.10"`, parsed as the CLI parses it
  std::string error;
  REQUIRE(parsePriceOverride("H100 SXM=2.10", flags.prices, &error));
  JobPrices p = pricesOfH100Job(flags, std::nullopt);
  CHECK(p.cost_price.get<double>() == Approx(2.10));
  CHECK(p.device_price.get<double>() == Approx(2.10));
  CHECK(p.class_price.get<double>() == Approx(2.10));
  CHECK(p.class_current == true);
  REQUIRE(p.gauge);
  CHECK(*p.gauge == Approx(2.10));
  CHECK(p.price_source == "option");
  CHECK(p.price_model.is_null()); // no table row priced it

  // --gpu-hour-price is the job's own GPU's price first, everywhere.
  flags.prices.current_gpu = 3.0; // as resolveGpuTypeOptions() sets it
  p = pricesOfH100Job(flags, 3.0);
  CHECK(p.cost_price.get<double>() == Approx(3.0));
  CHECK(p.class_price.get<double>() == Approx(3.0));
  REQUIRE(p.gauge);
  CHECK(*p.gauge == Approx(3.0));

  // Neither flag: the table's price in all three, from the table.
  p = pricesOfH100Job({}, std::nullopt);
  CHECK(p.cost_price.get<double>() == Approx(table));
  CHECK(p.class_price.get<double>() == Approx(table));
  REQUIRE(p.gauge);
  CHECK(*p.gauge == Approx(table));
  CHECK(p.price_source == "table");
  CHECK(p.price_model == "H100");
}

TEST_CASE("--gpu-price prices only its class: another class keeps the table's price") {
  CostOptions options;
  options.class_prices = {{"L4", 0.5}};
  const model::Trace t = threeGpus();
  auto report = reportPrices(t, options);
  CHECK(*report["0"] == lookupGpuPrice("NVIDIA H100 80GB HBM3")->usd_per_hour);
  CHECK(*report["1"] == lookupGpuPrice("NVIDIA A100-SXM4-80GB")->usd_per_hour);
  CHECK_FALSE(report["2"]);
  // The A100 told by its memory is the "A100 80GB" class: a price for it applies.
  options.class_prices = {{"A100 80GB", 1.5}};
  report = reportPrices(t, options);
  CHECK(*report["1"] == 1.5);
  CHECK(computeJobCost(analyzeJob(t), options).price_source == "option");
}

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
