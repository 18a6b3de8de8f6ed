// GPU energy end to end on the simulated device: `gpuwise run --simulate` around the input_stall
// sample (tests/e2e/energy.cmake).
//   - with the energy counter: summary.energy_joules is the difference of the counter between the
//     first and the last read, as the simulated NVML itself logged the values it answered
//     (GWSIM_NVML_ENERGY_LOG), read here independently of the shim, the wire and the advisor; and
//     the counter's growth agrees with the simulated device's formula (energy_meter.h);
//   - without it (GWSIM_NVML_ENERGY=0): the power readings integrated, labelled "nvml_power";
//   - without NVML (GWSIM_NVML=0): the estimate, board power x busy time, labelled "estimate";
//   - on a MIG slice (GWSIM_MIG_PROFILE): NVML measures nothing; the slice's share, estimated.
#include "tests/e2e/e2e_support.h"

#include <catch2/catch.hpp>

#include <fstream>

using namespace gpuwise::e2e;
using namespace std::chrono_literals;

namespace {

// The simulated h200's figures (tests/simdevice/core/energy_meter.cpp) and the board-power table's
// H200 row (advisor/cost/board_power.cpp).
constexpr double kIdleWatts = 90.0, kBusyWatts = 700.0, kH200BoardWatts = 700.0;
constexpr double kPricePerKwh = 0.25;

json runSample(const TempDir& dir, const std::vector<std::string>& env, const std::string& tag,
               std::string* err = nullptr) {
  Process p(
      gpuwise::advisor::test::simulatedRunArgv(dir, tag, {buildDir() + "/samples/input_stall"},
                                               {"--energy-price", std::to_string(kPricePerKwh)}),
      env, dir.path, dir.path, tag);
  auto status = p.wait(120s);
  REQUIRE(status);
  INFO(p.err());
  REQUIRE(*status == 0);
  if (err) *err = p.err();
  return readJson(dir / (tag + ".json"));
}

struct CounterRead {
  int device = 0;
  unsigned long long mj = 0;
  long long ns = 0;
};

std::vector<CounterRead> readLog(const std::string& path) {
  std::vector<CounterRead> reads;
  std::ifstream in(path);
  CounterRead r;
  while (in >> r.device >> r.mj >> r.ns)
    reads.push_back(r);
  return reads;
}

void checkEnergyShares(const json& report) {
  const double joules = report["summary"]["energy_joules"].get<double>();
  REQUIRE_FALSE(report["recommendations"].empty());
  for (const auto& r : report["recommendations"]) {
    INFO(r["id"]);
    CHECK(r["energy_saving_joules"].get<double>() ==
          Approx(r["expected_saving_ratio"].get<double>() * joules));
    CHECK(r["energy_saving_cost"].get<double>() ==
          Approx(r["energy_saving_joules"].get<double>() / 3.6e6 * kPricePerKwh));
  }
}

} // namespace

TEST_CASE("a live run's energy is its NVML counter's difference over the run") {
  TempDir dir;
  const std::string log = dir / "energy.log";
  std::string err;
  json report = runSample(dir, {"GWSIM_NVML_ENERGY_LOG=" + log}, "counter", &err);
  const json& s = report["summary"];
  INFO(report["energy"].dump(2));

  std::vector<CounterRead> reads = readLog(log);
  REQUIRE(reads.size() >= 2); // the first drain cycle and the final flush at least
  for (const auto& r : reads)
    REQUIRE(r.device == 0);
  const CounterRead& first = reads.front();
  const CounterRead& last = reads.back();
  const double counted_joules = double(last.mj - first.mj) / 1000.0;
  CHECK(s["energy_source"] == "nvml");
  CHECK(s["energy_joules"].get<double>() == Approx(counted_joules).margin(1e-9));
  CHECK(report["energy"]["estimated"] == false);
  // The clocks and power NVML reported, beside the memory figures (the h200 model's clocks).
  const json& nvml = report["device_samples"][0];
  CHECK(nvml["sm_clock_max_mhz"] == 1980);
  CHECK(nvml["memory_clock_max_mhz"] == 3201);
  CHECK(nvml["mean_power_watts"].get<double>() > kIdleWatts);
  CHECK(nvml["mean_power_watts"].get<double>() < kBusyWatts);

  // The counter grew as the simulated device says: idle power over the window between the reads
  // plus (busy - idle) power over the busy time inside it, which is at most the run's busy time.
  const double window = double(last.ns - first.ns) / 1e9;
  const double busy = s["gpu_busy_seconds"].get<double>();
  const double busy_in_window = (counted_joules - kIdleWatts * window) / (kBusyWatts - kIdleWatts);
  INFO("window " << window << " s, busy " << busy << " s, busy in window " << busy_in_window);
  CHECK(busy_in_window > 0.5 * busy);
  CHECK(busy_in_window <= busy * 1.001 + 1e-3);

  // Per step, its cost and each recommendation's share.
  const double steps = s["steps"]["count"].get<double>();
  REQUIRE(steps > 0);
  CHECK(s["energy_joules_per_step"].get<double>() == Approx(counted_joules / steps));
  CHECK(s["energy_cost"].get<double>() == Approx(counted_joules / 3.6e6 * kPricePerKwh));
  CHECK(report["energy"]["price_per_kwh"] == kPricePerKwh);
  CHECK(report["energy"]["price_source"] == "option");
  checkEnergyShares(report);
  // The terminal and the HTML report say where the figure comes from.
  CHECK(contains(err, "(NVML energy counter)"));
  CHECK(contains(readFile(dir / "counter.html"), "NVML energy counter"));
}

TEST_CASE("a GPU without the energy counter: its power readings, integrated and labelled") {
  TempDir dir;
  json report = runSample(dir, {"GWSIM_NVML_ENERGY=0"}, "power");
  const json& s = report["summary"];
  INFO(report["energy"].dump(2));
  CHECK(s["energy_source"] == "nvml_power");
  const double joules = s["energy_joules"].get<double>();
  const double wall = s["wall_seconds"].get<double>();
  // Between idle power over part of the run and busy power over all of it.
  CHECK(joules > kIdleWatts * 0.25 * wall);
  CHECK(joules < kBusyWatts * wall);
  const double mean_watts = report["energy"]["devices"][0]["mean_power_watts"].get<double>();
  CHECK(mean_watts > kIdleWatts);
  CHECK(mean_watts < kBusyWatts);
}

TEST_CASE("without NVML the energy is the board-power estimate, labelled as one") {
  TempDir dir;
  std::string err;
  json report = runSample(dir, {"GWSIM_NVML=0"}, "estimate", &err);
  const json& s = report["summary"];
  INFO(report["energy"].dump(2));
  CHECK(s["energy_source"] == "estimate");
  CHECK(report["energy"]["estimated"] == true);
  CHECK(s["energy_joules"].get<double>() ==
        Approx(kH200BoardWatts * s["gpu_busy_seconds"].get<double>()));
  CHECK(report["energy"]["devices"][0]["board_power_watts"] == kH200BoardWatts);
  checkEnergyShares(report);
  CHECK(contains(err, "ESTIMATE: board power x GPU busy time"));
  CHECK(contains(readFile(dir / "estimate.html"), "GPU energy (estimate)"));
}

TEST_CASE("a MIG slice, whose NVML has no counter nor power: its share of the board, estimated") {
  TempDir dir;
  json report = runSample(dir, {"GWSIM_MIG_PROFILE=1g.18gb"}, "slice");
  const json& s = report["summary"];
  INFO(report["energy"].dump(2));
  CHECK(s["energy_source"] == "estimate");
  CHECK(report["energy"]["devices"][0]["board_power_watts"] == Approx(kH200BoardWatts / 7));
  CHECK(s["energy_joules"].get<double>() ==
        Approx(kH200BoardWatts / 7 * s["gpu_busy_seconds"].get<double>()));
}
