// GPU energy in the advisor: NVML's readings per device (the counter's difference, the power
// integral where the counter is missing, windows merged), the job's energy and its labels, each
// recommendation's share, --energy-price, the board-power table, and the offline estimate on real
// traces against tests/data/energy/reference.json, computed independently in Python
// (tests/tools/energy_reference.py).
#include "advisor/cli/cli.h"
#include "advisor/cost/board_power.h"
#include "advisor/cost/energy_cost.h"
#include "advisor/gpu/gpu_classes.h"
#include "advisor/import/kineto_importer.h"
#include "advisor/report/report_json.h"
#include "tests/advisor/trace_builder.h"
#include "tests/traces_dir.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace gpuwise;
using namespace gpuwise::advisor;
using namespace gpuwise::advisor::test;
namespace fs = std::filesystem;

namespace {

model::PowerSample reading(model::TimeNs t, int64_t mj, int32_t mw, uint32_t device = 0) {
  model::PowerSample s;
  s.time = t;
  s.device = device;
  s.energy_mj = mj;
  s.power_mw = mw;
  return s;
}

// One H100 busy 1 s of a 2 s span, sampled by NVML every 0.5 s from 1 s to 3 s.
model::ProcessTrace sampled(int64_t pid, bool counter) {
  auto p = process(pid, "NVIDIA H100 80GB HBM3");
  p.devices[0].uuid = "GPU-aaaa";
  p.kernels = {kernel(1 * kSec, 1500 * kMs), kernel(2500 * kMs, 3 * kSec)};
  for (int i = 0; i <= 4; ++i)
    p.power_samples.push_back(reading(1 * kSec + i * 500 * kMs,
                                      counter ? 7'000'000 + i * 150'000 : -1, 300'000 + i * 1000));
  return p;
}

std::string sourceDir() {
  const char* s = std::getenv("GPUWISE_SOURCE_DIR");
  return s && *s ? s : ".";
}

} // namespace

TEST_CASE("energy readings: the counter's difference, else the power draw integrated") {
  EnergyReadings e;
  for (const auto& s : sampled(1, true).power_samples)
    e.add(s);
  REQUIRE(e.joules());
  CHECK(*e.joules() == Approx(600.0)); // 4 x 150,000 mJ
  CHECK(std::string(e.source()) == "nvml");
  CHECK(*e.meanPowerWatts() == Approx(302.0));

  EnergyReadings p;
  for (const auto& s : sampled(1, false).power_samples)
    p.add(s);
  // Each reading times the interval since the previous one: 0.5 s x (301 + 302 + 303 + 304) W.
  REQUIRE(p.joules());
  CHECK(*p.joules() == Approx(0.5 * (301 + 302 + 303 + 304)));
  CHECK(std::string(p.source()) == "nvml_power");

  EnergyReadings one;
  one.add(reading(kSec, 5, 1000));
  CHECK_FALSE(one.joules()); // one reading measures nothing
  CHECK(std::string(one.source()).empty());
}

TEST_CASE("energy readings: windows merged in any order give the whole run's figures") {
  const bool counter = GENERATE(false, true);
  auto samples = sampled(1, counter).power_samples;
  if (counter)
    for (auto& s : samples)
      s.power_mw = -1; // the counter alone
  INFO((counter ? "counter" : "power"));
  for (size_t cut = 1; cut < samples.size(); ++cut) {
    EnergyReadings whole, early, late;
    for (size_t i = 0; i < samples.size(); ++i) {
      whole.add(samples[i]);
      (i < cut ? early : late).add(samples[i]);
    }
    NvmlDeviceFigures a, b;
    a.energy = early;
    b.energy = late;
    NvmlResult in_order{{a}}, reversed{{b}};
    in_order.merge(NvmlResult{{b}});
    reversed.merge(NvmlResult{{a}});
    INFO("cut at " << cut);
    REQUIRE(in_order.devices.size() == 1);
    CHECK(*in_order.devices[0].energy.joules() == Approx(*whole.joules()));
    CHECK(*reversed.devices[0].energy.joules() == Approx(*whole.joules()));
  }
}

TEST_CASE("job energy: measured by NVML, each physical GPU once, with its share per finding") {
  model::Trace t;
  t.processes.push_back(sampled(1, true));
  t.processes.push_back(sampled(2, true)); // another process on the same GPU: one counter
  auto a = analyzeJob(t);
  CostOptions options;
  options.energy_price_kwh = 0.36;
  JobEnergy e = computeJobEnergy(a, options);
  CHECK(e.source == "nvml");
  REQUIRE(e.joules);
  CHECK(*e.joules == Approx(600.0));
  CHECK(*e.kwh == Approx(600.0 / 3.6e6));
  CHECK(*e.cost == Approx(600.0 / 3.6e6 * 0.36));
  CHECK(e.price_source == "option");
  Recommendation r;
  r.expected_saving_ratio = 0.25;
  FindingEnergy f = energyOf(r, e);
  CHECK(*f.saving_joules == Approx(150.0));
  CHECK(*f.saving_cost == Approx(150.0 / 3.6e6 * 0.36));

  // Two GPUs (two UUIDs) add up.
  t.processes[1].devices[0].uuid = "GPU-bbbb";
  CHECK(*computeJobEnergy(analyzeJob(t)).joules == Approx(1200.0));
}

TEST_CASE("job energy: without NVML readings, board power x busy time, labelled an estimate") {
  auto t = trace(sampled(1, true));
  t.processes[0].power_samples.clear();
  auto a = analyzeJob(t);
  JobEnergy e = computeJobEnergy(a);
  CHECK(e.source == "estimate");
  REQUIRE(e.joules);
  CHECK(*e.joules == Approx(700.0 * 1.0)); // H100 SXM 700 W x 1 s busy
  CHECK(e.price_kwh == kDefaultEnergyPriceKwh);
  CHECK(e.price_source == "default");
  const std::vector<Recommendation> none;
  auto j = buildReportJson({a, none, nullptr}, {});
  CHECK(j["summary"]["energy_source"] == "estimate");
  CHECK(j["summary"]["energy_joules"].get<double>() == Approx(700.0));
  CHECK(j["energy"]["estimated"] == true);
  CHECK(j["energy"]["devices"][0]["board_model"] == "H100 SXM");

  // A MIG slice: its share of the board, 3 compute slices of 7.
  t.processes[0].devices[0].mig_profile = "3g.40gb";
  JobEnergy slice = computeJobEnergy(analyzeJob(t));
  CHECK(*slice.joules == Approx(700.0 * 3 / 7));
  CHECK(*slice.devices[0].board_power_watts == Approx(300.0));
  t.processes[0].devices[0].mig_profile.clear();

  // A GPU the table does not know: unknown, and named.
  t.processes[0].devices[0].name = "Mystery GPU";
  JobEnergy unknown = computeJobEnergy(analyzeJob(t));
  CHECK_FALSE(unknown.joules);
  CHECK(unknown.unknown_gpus == std::vector<std::string>{"Mystery GPU"});
  const auto mystery = analyzeJob(t);
  auto ju = buildReportJson({mystery, none, nullptr}, {});
  CHECK(ju["summary"]["energy_joules"].is_null());
  CHECK(ju["summary"]["energy_source"].is_null());
}

TEST_CASE("board power: the class table's figure, whole words only") {
  auto watts = [](const char* name, uint64_t memory = 0) {
    auto p = boardPowerOf(name, memory);
    return p ? p->watts : -1.0;
  };
  CHECK(watts("NVIDIA H100 80GB HBM3") == 700);
  CHECK(watts("NVIDIA H100 PCIe") == 350);
  CHECK(watts("NVIDIA H100 NVL") == 400);
  CHECK(watts("NVIDIA H200") == 700);
  CHECK(watts("NVIDIA B200") == 1000);
  CHECK(watts("NVIDIA A100-SXM4-80GB") == 400);
  CHECK(watts("NVIDIA A100-PG509-200", 40'000'000'000ull) == 400);
  // PCIe A100 and V100 cards are their class's (the SXM part's figure: an upper bound).
  CHECK(watts("NVIDIA A100 80GB PCIe") == 400);
  CHECK(watts("Tesla V100-DGXS-32GB") == 300);
  CHECK(watts("Tesla V100-PCIE-16GB") == 300);
  CHECK(watts("NVIDIA L4") == 72);
  CHECK(watts("NVIDIA L40S") == 350); // not an L4
  CHECK(watts("NVIDIA A10G") == 300);
  CHECK(watts("NVIDIA A10") == 150); // not an A100
  CHECK(watts("Tesla T4") == 70);
  CHECK(watts("AMD Instinct MI300X") == 750);
  CHECK(watts("NVIDIA GH200 480GB") == -1);
  CHECK(watts("AMD Radeon Graphics") == -1);
  CHECK(watts("") == -1);
  // One figure per GPU: every class's board power is what the estimate uses, under its name.
  for (const auto& c : gpuClassTable()) {
    INFO(c.name);
    auto p = boardPowerOf(c.name, uint64_t(c.memory_gb * 1e9));
    REQUIRE(p);
    CHECK(p->watts == c.board_power_w);
    CHECK(p->model == std::string_view(c.name));
  }
}

TEST_CASE("--energy-price must be a positive number") {
  for (const char* bad : {"-1", "0", "cheap"}) {
    std::ostringstream out, err;
    const char* argv[] = {"gpuwise", "report", "in.gwt", "--energy-price", bad};
    INFO(bad);
    CHECK(runCli(5, argv, {out, err}) == 2);
    CHECK(err.str().find("--energy-price") != std::string::npos);
  }
}

TEST_CASE("the offline estimate agrees with the independent reference on real traces") {
  std::ifstream in(sourceDir() + "/tests/data/energy/reference.json");
  REQUIRE(in.good());
  const auto reference = nlohmann::json::parse(in).at("files");
  const fs::path root = gpuwise::test::realTracesDir();
  size_t compared = 0;
  for (const auto& [rel, ref] : reference.items()) {
    if (!fs::exists(root / rel)) continue; // the committed subset: the traces it holds
    INFO(rel);
    auto imported = importKineto({(root / rel).string()});
    REQUIRE(imported.ok());
    auto a = analyzeJob(imported.trace);
    JobEnergy e = computeJobEnergy(a);
    CHECK(e.source == "estimate");
    if (ref.at("joules").is_null()) {
      CHECK_FALSE(e.joules);
      CHECK_FALSE(e.unknown_gpus.empty());
    } else {
      REQUIRE(e.joules);
      // The reference rounds microsecond decimals to whole ns: 1 us of busy time at most.
      double margin = 0;
      for (const auto& [id, d] : ref.at("devices").items())
        margin += d.at("board_watts").get<double>() * 1e-6;
      CHECK(*e.joules == Approx(ref.at("joules").get<double>()).margin(margin));
      for (const auto& d : e.devices) {
        const auto& rd = ref.at("devices").at(std::to_string(d.device));
        CHECK(*d.board_power_watts == rd.at("board_watts").get<double>());
      }
      // Labelled in the report an estimate, never a measurement.
      const std::vector<Recommendation> none;
      auto j = buildReportJson({a, none, nullptr}, {});
      CHECK(j["summary"]["energy_source"] == "estimate");
      CHECK(j["energy"]["estimated"] == true);
    }
    ++compared;
  }
  CHECK(compared >= 4); // the committed subset holds four of the five
}
