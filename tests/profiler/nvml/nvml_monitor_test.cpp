// NvmlMonitor against the fake NVML: matching CUDA devices by UUID (whole GPU and MIG slice), the
// MIG profile from the name and from the GPU-instance profile table, samples, absent NVML.
#include "profiler/nvml/dl_nvml_port.h"
#include "profiler/nvml/fake_nvml_port.h"
#include "profiler/nvml/nvml_monitor.h"

#include <catch2/catch.hpp>

using namespace gpuwise;
using profiler::FakeNvmlPort;
using profiler::NvmlMonitor;

namespace {

constexpr uint8_t kUuid0[16] = {0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
                                0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x00};
constexpr uint8_t kUuid1[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
constexpr uint8_t kNone[16] = {};

FakeNvmlPort::Device gpu(const uint8_t (&uuid)[16], const char* name) {
  FakeNvmlPort::Device d;
  d.uuid = profiler::formatUuid(uuid, "GPU");
  d.name = name;
  d.total = 150ull << 30;
  d.used = 20ull << 30;
  d.gpu_util = 87;
  d.memory_util = 41;
  return d;
}

} // namespace

TEST_CASE("UUIDs are formatted the way nvidia-smi prints them") {
  CHECK(profiler::formatUuid(kUuid0, "GPU") == "GPU-11223344-5566-7788-99aa-bbccddeeff00");
  CHECK(profiler::formatUuid(kUuid1, "MIG") == "MIG-01020304-0506-0708-090a-0b0c0d0e0f10");
}

TEST_CASE("the MIG profile is read from a slice's name") {
  CHECK(profiler::migProfileFromName("NVIDIA H200 MIG 1g.18gb") == "1g.18gb");
  CHECK(profiler::migProfileFromName("MIG 3g.40gb") == "3g.40gb");
  CHECK(profiler::migProfileFromName("NVIDIA A100-SXM4-80GB MIG 1g.10gb+me") == "1g.10gb+me");
  CHECK(profiler::migProfileFromName("NVIDIA H200").empty());
  CHECK(profiler::migProfileFromName("MIG xg.5gb").empty());
}

TEST_CASE("a whole GPU is matched by UUID and sampled") {
  FakeNvmlPort port;
  port.devices_.push_back(gpu(kUuid1, "NVIDIA A100-SXM4-80GB"));
  port.devices_.push_back(gpu(kUuid0, "NVIDIA H200"));
  port.devices_[1].processes = {{4242, 3ull << 30, 0xFFFFFFFF, 0xFFFFFFFF},
                                {777, 5ull << 30, 0xFFFFFFFF, 0xFFFFFFFF}};
  NvmlMonitor mon(port);
  REQUIRE(mon.open().has_value());
  // CUDA device 0 is NVML's second GPU (CUDA_VISIBLE_DEVICES=1, or a different order).
  auto f = mon.identify(0, kUuid0);
  REQUIRE(f.found);
  CHECK(f.uuid == "GPU-11223344-5566-7788-99aa-bbccddeeff00");
  CHECK(f.name == "NVIDIA H200");
  CHECK(f.index == 1); // the node's index (dcgm-exporter's `gpu`), not the CUDA ordinal 0
  CHECK_FALSE(f.mig);
  CHECK(f.mig_profile.empty());
  CHECK(f.memory_total_bytes == 150ull << 30);

  std::vector<model::DeviceSample> out;
  mon.sample(1000, 4242, out);
  REQUIRE(out.size() == 1);
  CHECK(out[0].time == 1000);
  CHECK(out[0].device == 0);
  CHECK(out[0].process_used_bytes == int64_t(3ull << 30));
  CHECK(out[0].device_used_bytes == int64_t(20ull << 30));
  CHECK(out[0].device_total_bytes == int64_t(150ull << 30));
  CHECK(out[0].gpu_utilization == 87);
  CHECK(out[0].memory_utilization == 41);

  SECTION("a process NVML does not list (another pid namespace) has unknown memory") {
    out.clear();
    mon.sample(2000, 99, out);
    REQUIRE(out.size() == 1);
    CHECK(out[0].process_used_bytes == -1);
    CHECK(out[0].device_used_bytes == int64_t(20ull << 30));
  }
  mon.close();
  CHECK(port.shutdown_calls_ == 1);
}

TEST_CASE("a MIG slice is matched by its MIG- UUID and reports its profile") {
  FakeNvmlPort port;
  port.devices_.push_back(gpu(kUuid1, "NVIDIA H200"));
  FakeNvmlPort::Device slice;
  slice.uuid = profiler::formatUuid(kUuid0, "MIG");
  slice.mig = true;
  slice.parent = 0;
  slice.gpu_instance = 9;
  slice.compute_instance = 0;
  slice.profile_id = 19;
  slice.total = 16ull << 30;
  slice.used = 2ull << 30;
  slice.processes = {{31, 1ull << 30, 9, 0}};
  port.profiles_ = {FakeNvmlPort::profile(19, 1, 16384, "MIG 1g.18gb"),
                    FakeNvmlPort::profile(15, 1, 32768, "MIG 1g.35gb")};

  SECTION("the name carries the profile") {
    slice.name = "NVIDIA H200 MIG 1g.18gb";
  }
  SECTION("only the GPU-instance profile table says it") {
    slice.name = "NVIDIA H200";
  }
  port.devices_.push_back(slice);
  NvmlMonitor mon(port);
  REQUIRE(mon.open().has_value());
  auto f = mon.identify(0, kUuid0);
  REQUIRE(f.found);
  CHECK(f.mig);
  CHECK(f.uuid == "MIG-11223344-5566-7788-99aa-bbccddeeff00");
  CHECK(f.mig_profile == "1g.18gb");
  CHECK(f.gpu_instance == 9);
  CHECK(f.compute_instance == 0);
  CHECK(f.index == 0); // the parent GPU's index on the node
  CHECK(f.memory_total_bytes == 16ull << 30);

  std::vector<model::DeviceSample> out;
  mon.sample(5, 31, out);
  REQUIRE(out.size() == 1);
  CHECK(out[0].process_used_bytes == int64_t(1ull << 30));
  CHECK(out[0].gpu_utilization == -1); // not supported on a slice
  CHECK(out[0].device_total_bytes == int64_t(16ull << 30));
}

TEST_CASE("without UUID lookups or a CUDA UUID, devices are matched by index") {
  FakeNvmlPort port;
  port.lookup_by_uuid_ = false;
  port.devices_.push_back(gpu(kUuid1, "NVIDIA A100-SXM4-80GB"));
  port.devices_.push_back(gpu(kUuid0, "NVIDIA H200"));
  NvmlMonitor mon(port);
  REQUIRE(mon.open().has_value());
  // A UUID CUDA gave: found by walking NVML's devices.
  CHECK(mon.identify(0, kUuid0).name == "NVIDIA H200");
  if (!std::getenv("CUDA_VISIBLE_DEVICES")) {
    // No UUID: the index, as NVML numbers them.
    CHECK(mon.identify(1, kNone).name == "NVIDIA H200");
  }
  constexpr uint8_t kOther[16] = {9, 9, 9};
  CHECK_FALSE(mon.identify(2, kOther).found);
}

TEST_CASE("absent or failing NVML: open says why and nothing is sampled") {
  FakeNvmlPort port;
  port.available_ = false;
  NvmlMonitor mon(port);
  auto opened = mon.open();
  REQUIRE_FALSE(opened.has_value());
  CHECK(opened.error().message == "fake: libnvidia-ml.so.1 not loadable");
  CHECK_FALSE(mon.identify(0, kUuid0).found);
  std::vector<model::DeviceSample> out;
  mon.sample(1, 1, out);
  CHECK(out.empty());

  FakeNvmlPort failing;
  failing.init_result_ = NVML_ERROR_DRIVER_NOT_LOADED;
  NvmlMonitor mon2(failing);
  auto opened2 = mon2.open();
  REQUIRE_FALSE(opened2.has_value());
  CHECK(opened2.error().message == "nvmlInit_v2: Driver Not Loaded");
  mon2.close();
  CHECK(failing.shutdown_calls_ == 0);
}

TEST_CASE("the process list is re-read when it grew past the buffer") {
  FakeNvmlPort port;
  port.devices_.push_back(gpu(kUuid0, "NVIDIA H200"));
  for (unsigned i = 0; i < 20; ++i)
    port.devices_[0].processes.push_back({100 + i, (i + 1ull) << 20, 0xFFFFFFFF, 0xFFFFFFFF});
  NvmlMonitor mon(port);
  REQUIRE(mon.open().has_value());
  REQUIRE(mon.identify(0, kUuid0).found);
  std::vector<model::DeviceSample> out;
  mon.sample(1, 119, out);
  REQUIRE(out.size() == 1);
  CHECK(out[0].process_used_bytes == int64_t(20ull << 20));
  CHECK(port.process_calls_ == 2);
}

TEST_CASE("the dlopen port without the library is unavailable and says why") {
  profiler::DlNvmlPort port("libgpuwise-no-such-nvml.so.1");
  CHECK_FALSE(port.available());
  CHECK(std::string(port.whyUnavailable()).find("libgpuwise-no-such-nvml.so.1 not loadable") == 0);
  CHECK(port.init() == NVML_ERROR_LIBRARY_NOT_FOUND);
  unsigned int n = 7;
  CHECK(port.deviceGetCount(&n) == NVML_ERROR_LIBRARY_NOT_FOUND);
  CHECK(n == 7);
  NvmlMonitor mon(port);
  auto opened = mon.open();
  REQUIRE_FALSE(opened.has_value());
  CHECK_FALSE(opened.error().message.empty());
}
