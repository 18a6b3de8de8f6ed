// Precision and tensor-core shares (precision_analyzer.h) and kernel-time-weighted occupancy, SM
// fill and tail-wave loss (occupancy_analyzer.h), on hand-built kernels with known answers.
#include "advisor/analysis/job_analysis.h"
#include "tests/advisor/trace_builder.h"

#include <catch2/catch.hpp>

using namespace gpuwise;
using namespace gpuwise::advisor;
using namespace gpuwise::advisor::test;
using profiler::OccupancyLimiter;
using profiler::Precision;

namespace {

constexpr model::TimeNs T0 = 1'000'000'000;

model::KernelExec timed(model::ProcessTrace& p, const std::string& name, model::TimeNs start,
                        model::TimeNs ns, model::Dim3 grid = {1, 1, 1},
                        model::Dim3 block = {256, 1, 1}, uint32_t registers = 32) {
  auto k = kernel(T0 + start, T0 + start + ns, 7, 0, p.names.intern(name));
  k.grid = grid;
  k.block = block;
  k.registers_per_thread = registers;
  return k;
}

} // namespace

TEST_CASE("precision: kernel-time shares, tensor cores, FP32 GEMM time, unknown names listed") {
  auto p = process(1);
  p.kernels = {
      timed(p, "ampere_bf16_s16816gemm_bf16_128x256_ldg8_f2f_stages_64x3_tn", 0, 4000), // bf16 TC
      timed(p, "volta_sgemm_128x64_nn", 5000, 3000),                                    // fp32 GEMM
      timed(p,
            "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
            "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
            "at::detail::Array<char*, 3>)",
            9000, 2000),                         // fp32 elementwise
      timed(p, "my_custom_kernel", 12000, 1000), // unrecognised
  };
  auto a = analyzeJob(trace(p));
  const auto& r = a.precision;
  CHECK(r.kernel_ns == 10000);
  CHECK(*r.share(Precision::Bf16) == Approx(0.4));
  CHECK(*r.share(Precision::Fp32) == Approx(0.5));
  CHECK(*r.share(Precision::Other) == Approx(0.1));
  CHECK(*r.tensorCoreShare() == Approx(0.4));
  CHECK(r.fp32_matmul_ns == 3000);
  CHECK(*r.fp32MatmulShareOfFp32() == Approx(0.6));
  CHECK(r.unknown_names == 1);
  REQUIRE(r.unknown.size() == 1);
  CHECK(r.unknown[0].name == "my_custom_kernel");
  CHECK(r.unknown[0].total_ns == 1000);
  // Per kernel, as top_kernels[] shows it.
  const auto& top = a.kernels.by_name.front();
  CHECK(top.kernel_class.precision == Precision::Bf16);
  CHECK(top.kernel_class.tensor_core);
  CHECK(top.matmul_like);

  SECTION("no timed kernel: every share unknown") {
    auto q = process(2);
    q.kernels = {kernel(0, 0)};
    auto b = analyzeJob(trace(q));
    CHECK_FALSE(b.precision.tensorCoreShare());
    CHECK_FALSE(b.precision.share(Precision::Fp32));
  }
}

TEST_CASE("GEMM and convolution names are matmul-like; conversions and elementwise are not") {
  CHECK(isMatmulLike("volta_sgemm_128x64_nn"));
  CHECK(isMatmulLike("void implicit_convolve_sgemm<float, float, 1024, 5, 5, 3, 3, 3, 1, true>()"));
  CHECK(isMatmulLike("void cudnn::detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, false>(int)"));
  CHECK(isMatmulLike("nvjet_tst_128x64_64x4_1x2_h_bz_TNT"));
  CHECK_FALSE(isMatmulLike("void at::native::unrolled_elementwise_kernel<convert_float_half>()"));
  CHECK_FALSE(isMatmulLike("void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 512>()"));
}

TEST_CASE("occupancy: kernel-time weighted theoretical occupancy, limiter, SM fill, tail waves") {
  auto p = process(1); // H100: 132 SMs, compute capability 9.0
  // 256 threads x 32 registers: 8 blocks per SM by warps = 64 warps: occupancy 1.0. A grid of
  // 132 x 8 blocks fills exactly one wave.
  p.kernels.push_back(timed(p, "full", 0, 1000, {132 * 8, 1, 1}, {256, 1, 1}, 32));
  // 1024 threads x 64 registers: one block per SM (65536 registers), 32 of 64 warps: 0.5, by
  // registers. 66 blocks on 132 SMs: half of one wave.
  p.kernels.push_back(timed(p, "fat", 2000, 3000, {66, 1, 1}, {1024, 1, 1}, 64));
  auto a = analyzeJob(trace(p));
  const auto& o = a.kernels.occupancy;
  REQUIRE(o.occupancy());
  CHECK(*o.occupancy() == Approx((1.0 * 1000 + 0.5 * 3000) / 4000));
  CHECK(o.limiter() == OccupancyLimiter::Registers);
  CHECK(*o.limiterShare(OccupancyLimiter::Registers) == Approx(0.75));
  CHECK(*o.smFill() == Approx((1.0 * 1000 + 0.5 * 3000) / 4000));
  CHECK(*o.tailLoss() == Approx((0.0 * 1000 + 0.5 * 3000) / 4000));
  CHECK(o.known == 2);
  CHECK_FALSE(o.achieved()); // no trace estimate here
  for (const auto& s : a.kernels.by_name) {
    if (s.name == "full") CHECK(*s.occupancy.occupancy() == Approx(1.0));
    if (s.name == "fat") CHECK(s.occupancy.limiter() == OccupancyLimiter::Registers);
  }
}

TEST_CASE("occupancy: the trace's achieved estimate kept apart; unknown devices give none") {
  auto p = process(1);
  auto k1 = timed(p, "a", 0, 1000);
  k1.achieved_occupancy = 0.25f;
  auto k2 = timed(p, "b", 2000, 3000);
  k2.achieved_occupancy = 0.75f;
  p.kernels = {k1, k2, timed(p, "c", 6000, 1000)}; // no estimate: not in the achieved mean
  auto a = analyzeJob(trace(p));
  CHECK(*a.kernels.occupancy.achieved() == Approx((0.25 * 1000 + 0.75 * 3000) / 4000));

  auto amd = process(2, "AMD Instinct MI250X");
  amd.devices[0].compute_major = 9; // gfx90a reports 9.0: not an NVIDIA capability
  amd.kernels = {timed(amd, "a", 0, 1000)};
  auto b = analyzeJob(trace(amd));
  CHECK_FALSE(b.kernels.occupancy.occupancy());
  CHECK(b.kernels.occupancy.unknown == 1);

  auto nodev = process(3);
  nodev.devices.clear();
  nodev.kernels = {timed(nodev, "a", 0, 1000)};
  CHECK_FALSE(analyzeJob(trace(nodev)).kernels.occupancy.occupancy());
}
