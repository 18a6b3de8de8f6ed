#include "advisor/occupancy/device_limits.h"

#include <catch2/catch.hpp>

using namespace gpuwise::profiler;
using gpuwise::model::DeviceInfo;

TEST_CASE("the compute-capability table covers Volta to Blackwell") {
  struct Row {
    int major, minor;
    uint32_t threads, blocks, smem_sm, optin;
  };
  for (Row r : {Row{7, 0, 2048, 32, 98304, 98304}, Row{7, 5, 1024, 16, 65536, 65536},
                Row{8, 0, 2048, 32, 167936, 166912}, Row{8, 6, 1536, 16, 102400, 101376},
                Row{8, 9, 1536, 24, 102400, 101376}, Row{9, 0, 2048, 32, 233472, 232448},
                Row{10, 0, 2048, 32, 233472, 232448}, Row{12, 0, 1536, 24, 102400, 101376}}) {
    INFO(r.major << "." << r.minor);
    auto d = limitsForComputeCapability(r.major, r.minor);
    REQUIRE(d.has_value());
    CHECK(d->valid());
    CHECK(d->source == LimitsSource::ComputeCapability);
    CHECK(d->compute_major == r.major);
    CHECK(d->compute_minor == r.minor);
    CHECK(d->max_threads_per_sm == r.threads);
    CHECK(d->max_blocks_per_sm == r.blocks);
    CHECK(d->registers_per_sm == 65536);
    CHECK(d->shared_memory_per_sm == r.smem_sm);
    CHECK(d->shared_memory_per_block == 49152);
    CHECK(d->shared_memory_per_block_optin == r.optin);
    CHECK(d->reserved_shared_memory_per_block == (r.major >= 8 ? 1024u : 0u));
    CHECK(d->sm_count == 0);
  }
}

TEST_CASE("unknown minors fall back within the major; unknown majors do not resolve") {
  auto b300 = limitsForComputeCapability(10, 3);
  REQUIRE(b300.has_value());
  CHECK(b300->compute_minor == 3); // kept for the calculator, which knows 10.3
  CHECK(b300->max_threads_per_sm == 2048);
  auto gb10 = limitsForComputeCapability(12, 1);
  REQUIRE(gb10.has_value());
  CHECK(gb10->max_blocks_per_sm == 24);
  CHECK_FALSE(limitsForComputeCapability(5, 2).has_value());
  CHECK_FALSE(limitsForComputeCapability(11, 0).has_value());
  CHECK_FALSE(limitsForComputeCapability(0, 0).has_value());
}

TEST_CASE("GPU names give compute capability and SM count") {
  struct Row {
    const char* name;
    int major, minor;
    uint32_t sms;
  };
  for (Row r : {Row{"NVIDIA H100 80GB HBM3", 9, 0, 132}, Row{"NVIDIA H100 PCIe", 9, 0, 114},
                Row{"NVIDIA H200", 9, 0, 132}, Row{"NVIDIA B200", 10, 0, 148},
                Row{"NVIDIA A100-SXM4-80GB", 8, 0, 108}, Row{"NVIDIA A100-PG509-200", 8, 0, 108},
                Row{"NVIDIA A10G", 8, 6, 80}, Row{"NVIDIA A10", 8, 6, 72},
                Row{"NVIDIA L40S", 8, 9, 142}, Row{"NVIDIA L4", 8, 9, 58},
                Row{"Tesla V100-DGXS-32GB", 7, 0, 80}, Row{"Tesla V100-SXM2-16GB", 7, 0, 80},
                Row{"Tesla T4", 7, 5, 40}, Row{"Quadro GP100", 6, 0, 56}}) {
    INFO(r.name);
    auto d = limitsForGpuName(r.name);
    REQUIRE(d.has_value());
    CHECK(d->source == LimitsSource::GpuName);
    CHECK(d->compute_major == r.major);
    CHECK(d->compute_minor == r.minor);
    CHECK(d->sm_count == r.sms);
  }
  for (const char* name :
       {"", "Some GPU", "AMD Instinct MI300X", "AMD Radeon Graphics", "ARTEMIS"}) {
    INFO(name);
    CHECK_FALSE(limitsForGpuName(name).has_value());
  }
}

TEST_CASE("resolveDeviceLimits prefers what the device reported") {
  SECTION("a B200 as its Kineto trace describes it") {
    DeviceInfo b200;
    b200.name = "NVIDIA B200";
    b200.compute_major = 10;
    b200.sm_count = 148;
    b200.max_threads_per_sm = 2048;
    b200.registers_per_sm = 65536;
    b200.shared_memory_per_sm = 233472;
    b200.max_shared_memory_per_block = 232448;
    b200.warp_size = 32;
    DeviceLimits d = resolveDeviceLimits(b200);
    CHECK(d.valid());
    CHECK(d.source == LimitsSource::Device);
    CHECK(d.sm_count == 148);
    CHECK(d.shared_memory_per_block == 49152);
    CHECK(d.shared_memory_per_block_optin == 232448);
    CHECK(d.max_blocks_per_sm == 32); // not in the trace: from the table
    CHECK(d.reserved_shared_memory_per_block == 1024);
  }
  SECTION("only a name") {
    DeviceInfo h100;
    h100.name = "NVIDIA H100 80GB HBM3";
    DeviceLimits d = resolveDeviceLimits(h100);
    CHECK(d.valid());
    CHECK(d.source == LimitsSource::GpuName);
    CHECK(d.compute_major == 9);
    CHECK(d.sm_count == 132);
  }
  SECTION("a capability without an SM count takes the count from the name") {
    DeviceInfo a100;
    a100.name = "NVIDIA A100-PG509-200";
    a100.compute_major = 8;
    DeviceLimits d = resolveDeviceLimits(a100);
    CHECK(d.source == LimitsSource::ComputeCapability);
    CHECK(d.sm_count == 108);
  }
  SECTION("reported fields override the table") {
    DeviceInfo mig;
    mig.name = "NVIDIA A100-SXM4-40GB MIG 1g.5gb";
    mig.compute_major = 8;
    mig.sm_count = 14;
    mig.max_blocks_per_sm = 16;
    mig.max_shared_memory_per_block = 49152;
    DeviceLimits d = resolveDeviceLimits(mig);
    CHECK(d.sm_count == 14);
    CHECK(d.max_blocks_per_sm == 16);
    CHECK(d.shared_memory_per_block == 49152);
    CHECK(d.shared_memory_per_block_optin == 166912);
  }
  SECTION("nothing known, or not NVIDIA") {
    CHECK_FALSE(resolveDeviceLimits(DeviceInfo{}).valid());
    DeviceInfo amd;
    amd.name = "AMD Instinct MI210";
    amd.compute_major = 9; // gfx90a, as Kineto records it
    CHECK_FALSE(resolveDeviceLimits(amd).valid());
  }
}
