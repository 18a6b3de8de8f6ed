// Theoretical occupancy and wave fill against answers worked out by hand from the CUDA occupancy
// calculator's rules: 4 register sub-partitions per SM, registers allocated per warp in units of
// 256, shared memory in units of 128 bytes (256 before Ampere) plus 1 KiB the driver reserves per
// block from Ampere on, and the per-architecture warp and block limits.
#include "advisor/occupancy/occupancy.h"

#include <catch2/catch.hpp>

#include <climits>

using namespace gpuwise::profiler;

namespace {

DeviceLimits cc(int major, int minor, uint32_t sm_count = 0) {
  auto d = limitsForComputeCapability(major, minor);
  REQUIRE(d.has_value());
  d->sm_count = sm_count;
  return *d;
}

Occupancy occ(const DeviceLimits& d, uint32_t threads, uint32_t regs, uint32_t static_smem = 0,
              uint32_t dynamic_smem = 0) {
  return theoreticalOccupancy(LaunchShape{threads, regs, static_smem, dynamic_smem}, d);
}

} // namespace

TEST_CASE("256 threads with 32 registers fill an A100 SM") {
  Occupancy o = occ(cc(8, 0), 256, 32);
  REQUIRE(o.valid);
  CHECK(o.active_blocks_per_sm == 8);
  CHECK(o.active_warps_per_sm == 64);
  CHECK(o.max_warps_per_sm == 64);
  CHECK(o.occupancy == Approx(1.0));
  // Warp slots and registers both allow exactly 8 blocks; at 100% the SM is simply full.
  CHECK(o.blocks_by_warps == 8);
  CHECK(o.blocks_by_registers == 8);
  CHECK(o.blocks_by_architecture == 32);
  CHECK(o.blocks_by_shared_memory == 164); // 1 KiB reserved per block, 164 KiB per SM
  CHECK(o.limiter == OccupancyLimiter::Warps);
  CHECK(o.limiter_mask ==
        (limiterBit(OccupancyLimiter::Warps) | limiterBit(OccupancyLimiter::Registers)));
  CHECK_FALSE(o.registers_unknown);
}

TEST_CASE("128 registers per thread limit an H100 SM to a quarter") {
  // 128 x 32 = 4096 registers per warp; 16384 per sub-partition hold 4 warps, 16 per SM: 2 blocks.
  Occupancy o = occ(cc(9, 0), 256, 128);
  CHECK(o.active_blocks_per_sm == 2);
  CHECK(o.active_warps_per_sm == 16);
  CHECK(o.occupancy == Approx(0.25));
  CHECK(o.limiter == OccupancyLimiter::Registers);
  CHECK(o.blocks_by_registers == 2);
}

TEST_CASE("register limits on Volta and Blackwell") {
  Occupancy v100 = occ(cc(7, 0), 256, 64); // 2048 regs/warp: 8 warps per sub-partition, 4 blocks
  CHECK(v100.active_blocks_per_sm == 4);
  CHECK(v100.occupancy == Approx(0.5));
  CHECK(v100.limiter == OccupancyLimiter::Registers);

  Occupancy b200 = occ(cc(10, 0), 128, 168); // 5376 regs/warp: 3 warps per sub-partition, 12/SM
  CHECK(b200.active_blocks_per_sm == 3);
  CHECK(b200.occupancy == Approx(12.0 / 64.0));
  CHECK(b200.limiter == OccupancyLimiter::Registers);
}

TEST_CASE("shared memory limits resident blocks") {
  // 64 KiB dynamic + 1 KiB reserved = 66560 bytes per block; 167936 per SM hold 2.
  Occupancy dyn = occ(cc(8, 0), 128, 32, 0, 64 * 1024);
  CHECK(dyn.active_blocks_per_sm == 2);
  CHECK(dyn.occupancy == Approx(8.0 / 64.0));
  CHECK(dyn.limiter == OccupancyLimiter::SharedMemory);
  CHECK(dyn.blocks_by_shared_memory == 2);

  // 48 KiB static + 1 KiB reserved = 50176 bytes: 3 blocks.
  Occupancy stat = occ(cc(8, 0), 128, 32, 48 * 1024, 0);
  CHECK(stat.active_blocks_per_sm == 3);
  CHECK(stat.occupancy == Approx(12.0 / 64.0));
  CHECK(stat.limiter == OccupancyLimiter::SharedMemory);

  // 200 KiB needs Hopper's opt-in 227 KiB: one block there, none on an A100.
  Occupancy h100 = occ(cc(9, 0), 256, 32, 0, 200 * 1024);
  CHECK(h100.active_blocks_per_sm == 1);
  CHECK(h100.occupancy == Approx(8.0 / 64.0));
  Occupancy a100 = occ(cc(8, 0), 256, 32, 0, 200 * 1024);
  CHECK(a100.valid);
  CHECK(a100.active_blocks_per_sm == 0);
  CHECK(a100.occupancy == 0.0);
  CHECK(a100.limiter == OccupancyLimiter::SharedMemory);

  // Volta allocates shared memory in 256-byte units and reserves nothing: 96 KiB / 24.25 KiB = 3.
  Occupancy v100 = occ(cc(7, 0), 128, 32, 24 * 1024 + 1, 0);
  CHECK(v100.active_blocks_per_sm == 3);
  CHECK(v100.limiter == OccupancyLimiter::SharedMemory);
}

TEST_CASE("block sizes that are not a multiple of the warp size round up to whole warps") {
  // 96 threads = 3 warps: 64 registers -> 8 warps per sub-partition, 32 per SM, 10 blocks.
  Occupancy three = occ(cc(9, 0), 96, 64);
  CHECK(three.active_blocks_per_sm == 10);
  CHECK(three.active_warps_per_sm == 30);
  CHECK(three.occupancy == Approx(30.0 / 64.0));
  // 97 threads = 4 warps (the last with one thread): 8 blocks, 32 warp slots taken.
  Occupancy four = occ(cc(9, 0), 97, 64);
  CHECK(four.active_blocks_per_sm == 8);
  CHECK(four.active_warps_per_sm == 32);
  CHECK(four.occupancy == Approx(0.5));
  CHECK(four.limiter == OccupancyLimiter::Registers);
  // 100 threads, few registers: 16 blocks of 4 warps fill the 64 slots.
  Occupancy hundred = occ(cc(8, 0), 100, 16);
  CHECK(hundred.active_blocks_per_sm == 16);
  CHECK(hundred.occupancy == Approx(1.0));
  CHECK(hundred.limiter == OccupancyLimiter::Warps);
}

TEST_CASE("small blocks hit the resident-block limit") {
  Occupancy a100 = occ(cc(8, 0), 32, 16); // 32 blocks x 1 warp of 64
  CHECK(a100.active_blocks_per_sm == 32);
  CHECK(a100.occupancy == Approx(0.5));
  CHECK(a100.limiter == OccupancyLimiter::Blocks);
  Occupancy l4 = occ(cc(8, 9), 32, 16); // 24 blocks of 48 warps
  CHECK(l4.active_blocks_per_sm == 24);
  CHECK(l4.occupancy == Approx(0.5));
  CHECK(l4.limiter == OccupancyLimiter::Blocks);
  Occupancy t4 = occ(cc(7, 5), 32, 16); // 16 blocks of 32 warps
  CHECK(t4.active_blocks_per_sm == 16);
  CHECK(t4.occupancy == Approx(0.5));
  // Hopper's barrier limit (2 per block slot) does not bind before the block limit.
  Occupancy h100 = occ(cc(9, 0), 32, 16);
  CHECK(h100.active_blocks_per_sm == 32);
  CHECK((h100.limiter_mask & limiterBit(OccupancyLimiter::Barriers)) == 0);
}

TEST_CASE("warp slots limit large blocks on 1536-thread SMs") {
  Occupancy ga102 = occ(cc(8, 6), 1024, 32); // one 32-warp block of 48 slots
  CHECK(ga102.active_blocks_per_sm == 1);
  CHECK(ga102.occupancy == Approx(32.0 / 48.0));
  CHECK(ga102.limiter == OccupancyLimiter::Warps);
  Occupancy gb202 = occ(cc(12, 0), 768, 32); // two 24-warp blocks fill 48 slots
  CHECK(gb202.active_blocks_per_sm == 2);
  CHECK(gb202.occupancy == Approx(1.0));
}

TEST_CASE("unknown registers leave the register limit out and say so") {
  Occupancy o = occ(cc(8, 0), 256, 0);
  CHECK(o.valid);
  CHECK(o.registers_unknown);
  CHECK(o.blocks_by_registers == UINT32_MAX);
  CHECK(o.active_blocks_per_sm == 8);
  CHECK(o.occupancy == Approx(1.0));
  CHECK((o.limiter_mask & limiterBit(OccupancyLimiter::Registers)) == 0);
}

TEST_CASE("launches that cannot run get zero occupancy; unknown devices none") {
  Occupancy too_big = occ(cc(8, 0), 2048, 32);
  CHECK(too_big.valid);
  CHECK(too_big.active_blocks_per_sm == 0);
  CHECK(too_big.limiter == OccupancyLimiter::Warps);
  Occupancy too_many_regs = occ(cc(8, 0), 1024, 255); // 8192 x 32 warps > 65536 per block
  CHECK(too_many_regs.active_blocks_per_sm == 0);
  CHECK(too_many_regs.limiter == OccupancyLimiter::Registers);

  CHECK_FALSE(occ(DeviceLimits{}, 256, 32).valid);
  Occupancy no_block = occ(cc(8, 0), 0, 32);
  CHECK_FALSE(no_block.valid);
  CHECK(no_block.limiter == OccupancyLimiter::None);
  CHECK(limiterName(OccupancyLimiter::SharedMemory) == "shared_memory");
  CHECK(limiterName(OccupancyLimiter::None) == "none");
}

TEST_CASE("SM fill and tail waves") {
  // An A100 (108 SMs) holding 8 blocks per SM: 864 blocks per wave.
  SECTION("a grid smaller than one wave") {
    WaveFill w = waveFill(100, 108, 8);
    REQUIRE(w.valid);
    CHECK(w.blocks_per_wave == 864);
    CHECK(w.wave_count == 1);
    CHECK(w.waves == Approx(100.0 / 864.0));
    CHECK(w.sm_fill == Approx(100.0 / 864.0));
    CHECK(w.tail_loss == Approx(1.0 - 100.0 / 864.0));
  }
  SECTION("a grid smaller than the SM count") {
    WaveFill w = waveFill(50, 108, 1); // one resident block per SM (big blocks)
    CHECK(w.sm_fill == Approx(50.0 / 108.0));
    CHECK(w.tail_loss == Approx(58.0 / 108.0));
  }
  SECTION("exactly one wave") {
    WaveFill w = waveFill(864, 108, 8);
    CHECK(w.wave_count == 1);
    CHECK(w.waves == Approx(1.0));
    CHECK(w.sm_fill == Approx(1.0));
    CHECK(w.tail_loss == 0.0);
  }
  SECTION("one block over a wave costs almost half of two waves") {
    WaveFill w = waveFill(865, 108, 8);
    CHECK(w.wave_count == 2);
    CHECK(w.sm_fill == Approx(1.0));
    CHECK(w.waves == Approx(865.0 / 864.0));
    CHECK(w.tail_loss == Approx(863.0 / 1728.0));
  }
  SECTION("many full waves lose nothing") {
    WaveFill w = waveFill(864 * 10, 108, 8);
    CHECK(w.wave_count == 10);
    CHECK(w.tail_loss == 0.0);
  }
  SECTION("empty grid and unknown inputs") {
    WaveFill empty = waveFill(0, 108, 8);
    CHECK(empty.valid);
    CHECK(empty.sm_fill == 0.0);
    CHECK(empty.tail_loss == 0.0);
    CHECK_FALSE(waveFill(100, 0, 8).valid);
    CHECK_FALSE(waveFill(100, 108, 0).valid);
  }
}

TEST_CASE("analyzeLaunch reads a kernel record") {
  gpuwise::model::KernelExec k;
  k.block = {32, 8, 1}; // 256 threads
  k.grid = {865, 1, 1};
  k.registers_per_thread = 32;
  LaunchAnalysis a = analyzeLaunch(k, cc(8, 0, 108));
  CHECK(a.occupancy.occupancy == Approx(1.0));
  REQUIRE(a.fill.valid);
  CHECK(a.fill.wave_count == 2);
  CHECK(a.fill.tail_loss == Approx(863.0 / 1728.0));

  k.dynamic_shared_bytes = 64 * 1024;
  LaunchAnalysis smem = analyzeLaunch(k, cc(8, 0, 108));
  CHECK(smem.occupancy.active_blocks_per_sm == 2);
  CHECK(smem.fill.blocks_per_wave == 216);

  LaunchAnalysis no_sms = analyzeLaunch(k, cc(8, 0, 0));
  CHECK(no_sms.occupancy.valid);
  CHECK_FALSE(no_sms.fill.valid);
}
