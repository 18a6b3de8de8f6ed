// NvmlMonitor's power readings against the fake NVML: the energy counter, power draw and clocks in
// each PowerSample; a GPU without the counter (NOT_SUPPORTED: asked once, counted once, power still
// read); other failures counted on every read; MIG slices; no NVML.
#include "profiler/nvml/fake_nvml_port.h"
#include "profiler/nvml/nvml_monitor.h"

#include <catch2/catch.hpp>

using namespace gpuwise;
using profiler::FakeNvmlPort;
using profiler::NvmlMonitor;

namespace {

constexpr uint8_t kUuid[16] = {0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
                               0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x00};

FakeNvmlPort::Device h200() {
  FakeNvmlPort::Device d;
  d.uuid = profiler::formatUuid(kUuid, "GPU");
  d.name = "NVIDIA H200";
  d.total = 150ull << 30;
  d.energy_mj = 5'000'000'000ull; // 5 GJ since the driver loaded: readers take differences
  d.power_mw = 412'345;
  d.sm_clock_mhz = 1980;
  d.memory_clock_mhz = 3201;
  return d;
}

struct Sampled {
  std::vector<model::DeviceSample> samples;
  std::vector<model::PowerSample> power;
};

Sampled sampleAt(NvmlMonitor& mon, model::TimeNs now) {
  Sampled s;
  mon.sample(now, 4242, s.samples, s.power);
  return s;
}

} // namespace

TEST_CASE("each sample carries the energy counter, the power draw and the clocks") {
  FakeNvmlPort port;
  port.devices_.push_back(h200());
  NvmlMonitor mon(port);
  REQUIRE(mon.open().has_value());
  REQUIRE(mon.identify(3, kUuid).found);

  Sampled first = sampleAt(mon, 1'000'000'000);
  REQUIRE(first.power.size() == 1);
  REQUIRE(first.samples.size() == 1); // the DeviceSample of the same tick is still there
  const model::PowerSample& p = first.power[0];
  CHECK(p.time == 1'000'000'000);
  CHECK(p.device == 3); // the CUDA index, as DeviceSample's
  CHECK(p.energy_mj == 5'000'000'000);
  CHECK(p.power_mw == 412'345);
  CHECK(p.sm_clock_mhz == 1980);
  CHECK(p.memory_clock_mhz == 3201);

  port.devices_[0].energy_mj += 700'000; // 700 J later
  Sampled second = sampleAt(mon, 2'000'000'000);
  REQUIRE(second.power.size() == 1);
  CHECK(second.power[0].energy_mj - first.power[0].energy_mj == 700'000);
  CHECK(mon.powerReads().errors == 0);
  CHECK(mon.powerReads().energy_not_supported == 0);
}

TEST_CASE("a GPU without the energy counter is asked once and still reports its power") {
  FakeNvmlPort port;
  port.devices_.push_back(h200());
  port.devices_[0].energy_result = NVML_ERROR_NOT_SUPPORTED;
  NvmlMonitor mon(port);
  REQUIRE(mon.open().has_value());
  REQUIRE(mon.identify(0, kUuid).found);
  for (int i = 0; i < 3; ++i) {
    Sampled s = sampleAt(mon, 1000 + i);
    REQUIRE(s.power.size() == 1);
    CHECK(s.power[0].energy_mj == -1); // the advisor integrates the power instead
    CHECK(s.power[0].power_mw == 412'345);
  }
  CHECK(port.energy_calls_ == 1); // NOT_SUPPORTED is the device's answer for good
  CHECK(port.power_calls_ == 3);
  CHECK(mon.powerReads().energy_not_supported == 1);
  CHECK(mon.powerReads().errors == 0);
}

TEST_CASE("other failed reads leave the field unknown, are counted and are retried") {
  FakeNvmlPort port;
  port.devices_.push_back(h200());
  port.devices_[0].energy_result = NVML_ERROR_UNKNOWN;
  port.devices_[0].power_result = NVML_ERROR_GPU_IS_LOST;
  NvmlMonitor mon(port);
  REQUIRE(mon.open().has_value());
  REQUIRE(mon.identify(0, kUuid).found);
  Sampled a = sampleAt(mon, 10);
  Sampled b = sampleAt(mon, 20);
  CHECK(a.power[0].energy_mj == -1);
  CHECK(b.power[0].power_mw == -1);
  CHECK(b.power[0].sm_clock_mhz == 1980); // the clocks still answered
  CHECK(port.energy_calls_ == 2);
  CHECK(port.power_calls_ == 2);
  CHECK(mon.powerReads().errors == 4);
  CHECK(mon.powerReads().energy_not_supported == 0);
  CHECK(mon.powerReads().power_not_supported == 0);
}

TEST_CASE("a MIG slice has neither the counter nor power readings") {
  FakeNvmlPort port;
  port.devices_.push_back(h200());
  port.devices_[0].uuid = "GPU-parent";
  FakeNvmlPort::Device slice = h200();
  slice.uuid = profiler::formatUuid(kUuid, "MIG");
  slice.name = "NVIDIA H200 MIG 1g.18gb";
  slice.mig = true;
  slice.parent = 0;
  port.devices_.push_back(slice);
  NvmlMonitor mon(port);
  REQUIRE(mon.open().has_value());
  REQUIRE(mon.identify(0, kUuid).mig);
  Sampled s = sampleAt(mon, 5);
  REQUIRE(s.power.size() == 1);
  CHECK(s.power[0].energy_mj == -1);
  CHECK(s.power[0].power_mw == -1);
  CHECK(mon.powerReads().energy_not_supported == 1);
  CHECK(mon.powerReads().power_not_supported == 1);
}

TEST_CASE("without NVML nothing is sampled") {
  FakeNvmlPort port;
  port.available_ = false;
  NvmlMonitor mon(port);
  CHECK_FALSE(mon.open().has_value());
  Sampled s = sampleAt(mon, 5);
  CHECK(s.power.empty());
  CHECK(port.energy_calls_ == 0);
}
