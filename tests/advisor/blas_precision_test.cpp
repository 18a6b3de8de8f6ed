// The cuBLAS precision probe on plain records: requested precision from types, matching calls to
// the kernels their thread launched during them, agreement with the kernel-name classification.
#include "advisor/analysis/blas_precision_analyzer.h"
#include "advisor/analysis/job_analysis.h"
#include "advisor/report/report_json.h"

#include <catch2/catch.hpp>

using namespace gpuwise;
using namespace gpuwise::advisor;
using profiler::Precision;

namespace {

constexpr const char* kTf32Kernel = "sm90_xmma_gemm_tf32f32_tf32f32_f32_tn_n_tilesize128x128x32_"
                                    "warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas";
constexpr const char* kF16Kernel = "sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x64_"
                                   "warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas";
constexpr const char* kBf16Kernel = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_"
                                    "warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas";
constexpr const char* kSgemmKernel = "cutlass_80_simt_sgemm_128x128_8x4_nn_align1";

model::BlasCall call(model::TimeNs start, int32_t a, int32_t compute, int32_t math = -1,
                     uint32_t thread = 7, model::BlasApi api = model::BlasApi::GemmEx) {
  model::BlasCall c;
  c.start = start;
  c.end = start + 10'000;
  c.thread = thread;
  c.api = api;
  c.a_type = c.b_type = a;
  c.c_type = a;
  c.compute_type = compute;
  c.math_mode = math;
  c.m = c.n = c.k = 1024;
  return c;
}

void kernel(model::ProcessTrace& p, const char* name, model::TimeNs launch, uint32_t thread = 7,
            model::TimeNs duration = 50'000) {
  model::KernelExec k;
  k.name = p.names.intern(name);
  k.launch_start = launch;
  k.launch_end = launch + 2000;
  k.start = launch + 5000;
  k.end = k.start + duration;
  k.thread = thread;
  p.kernels.push_back(k);
}

} // namespace

TEST_CASE("the precision a call's types ask for") {
  auto req = [](int32_t a, int32_t compute, int32_t math = -1) {
    return requestedPrecision(call(0, a, compute, math));
  };
  CHECK(req(2, 68) == Precision::Fp16);         // CUDA_R_16F, COMPUTE_32F
  CHECK(req(14, 68) == Precision::Bf16);        // CUDA_R_16BF
  CHECK(req(0, 68) == Precision::Fp32);         // FP32 data, default math
  CHECK(req(0, 68, 3) == Precision::Tf32);      // CUBLAS_TF32_TENSOR_OP_MATH
  CHECK(req(0, 68, 3 | 16) == Precision::Tf32); // with DISALLOW_REDUCED_PRECISION_REDUCTION
  CHECK(req(0, 69, 3) == Precision::Fp32);      // 32F_PEDANTIC ignores the math mode
  CHECK(req(0, 77) == Precision::Tf32);         // 32F_FAST_TF32
  CHECK(req(0, 74) == Precision::Fp16);         // 32F_FAST_16F
  CHECK(req(0, 75) == Precision::Bf16);         // 32F_FAST_16BF
  CHECK(req(1, 70) == Precision::Fp64);
  CHECK(req(28, 68) == Precision::Fp8); // CUDA_R_8F_E4M3
  CHECK(req(3, 72) == Precision::Int8);
  CHECK_FALSE(req(-1, 68));
  CHECK_FALSE(req(0, -1));
  CHECK(describeTypes(call(0, 0, 68, 3)) == "A=fp32 B=fp32 C=fp32 compute=32F math=TF32_TENSOR_OP");
}

TEST_CASE("calls are matched to their thread's launches and compared with the kernel names") {
  model::Trace t;
  t.processes.emplace_back();
  auto& p = t.processes[0];
  // 1: fp16 asked, fp16 tensor-core kernel ran (agree).
  p.blas_calls.push_back(call(1'000'000, 2, 68));
  kernel(p, kF16Kernel, 1'002'000);
  // 2: TF32 asked through the math mode, an FP32 SIMT kernel ran (disagree), twice.
  p.blas_calls.push_back(call(2'000'000, 0, 68, 3));
  kernel(p, kSgemmKernel, 2'001'000, 7, 80'000);
  p.blas_calls.push_back(call(3'000'000, 0, 68, 3));
  kernel(p, kSgemmKernel, 3'001'000, 7, 70'000);
  // 3: TF32 asked, TF32 kernel ran (agree).
  p.blas_calls.push_back(call(4'000'000, 0, 77));
  kernel(p, kTf32Kernel, 4'001'000);
  // 4: a kernel of another thread during the call is not its kernel; none of its own: unmatched.
  p.blas_calls.push_back(call(5'000'000, 14, 68));
  kernel(p, kBf16Kernel, 5'001'000, 8);
  // 5: its kernel's name says nothing: unclassified.
  p.blas_calls.push_back(call(6'000'000, 14, 68, -1, 7, model::BlasApi::LtMatmul));
  kernel(p, "my_custom_kernel", 6'001'000);
  // A launch after every call belongs to none.
  kernel(p, kSgemmKernel, 9'000'000);

  auto r = analyzeBlasPrecision(t);
  CHECK(r.calls == 6);
  CHECK(r.calls_with_kernels == 5);
  CHECK(r.agreeing_calls == 2);
  CHECK(r.disagreeing_calls == 2);
  CHECK(r.unclassified_calls == 1);
  CHECK(r.disagreeing_kernel_ns == 150'000);
  REQUIRE(r.matches.size() == 4);
  const auto& d = r.matches[0]; // disagreements first
  CHECK_FALSE(d.agrees);
  CHECK(d.classified);
  CHECK(d.requested == Precision::Tf32);
  CHECK(d.kernel_precision == Precision::Fp32);
  CHECK(d.kernel == kSgemmKernel);
  CHECK(d.calls == 2);
  CHECK(d.kernel_ns == 150'000);
  CHECK(d.api == "cublasGemmEx");
  CHECK(d.types == "A=fp32 B=fp32 C=fp32 compute=32F math=TF32_TENSOR_OP");
  size_t agreeing = 0, unclassified = 0;
  for (const auto& m : r.matches) {
    agreeing += m.agrees;
    unclassified += !m.classified;
  }
  CHECK(agreeing == 2);
  CHECK(unclassified == 1);

  SECTION("the JSON report lists it under precision.blas_probe, the terminal summary says it") {
    JobAnalysis a = analyzeJob(t);
    CHECK(a.blas.disagreeing_calls == 2);
    std::vector<Recommendation> recs;
    auto j = buildReportJson({a, recs});
    REQUIRE(j["precision"].contains("blas_probe"));
    const auto& b = j["precision"]["blas_probe"];
    CHECK(b["calls"] == 6);
    CHECK(b["disagreeing_calls"] == 2);
    CHECK(b["kernels"][0]["requested_precision"] == "tf32");
    CHECK(b["kernels"][0]["kernel_precision"] == "fp32");
    CHECK(b["kernels"][0]["agrees"] == false);
  }
  SECTION("merging windows adds the counts and keeps one entry per (types, kernel)") {
    auto twice = r;
    twice.merge(r);
    CHECK(twice.calls == 12);
    CHECK(twice.disagreeing_calls == 4);
    REQUIRE(twice.matches.size() == 4);
    CHECK(twice.matches[0].calls == 4);
  }
}

TEST_CASE("no BLAS calls: no probe, and the report has no blas_probe") {
  model::Trace t;
  t.processes.emplace_back();
  kernel(t.processes[0], kSgemmKernel, 1000);
  auto r = analyzeBlasPrecision(t);
  CHECK_FALSE(r.probed());
  CHECK(r.matches.empty());
  JobAnalysis a = analyzeJob(t);
  std::vector<Recommendation> recs;
  auto j = buildReportJson({a, recs});
  CHECK_FALSE(j["precision"].contains("blas_probe"));
}

TEST_CASE("NVML samples: peaks and mean utilisation per process and device, in the report") {
  model::Trace t;
  t.processes.emplace_back();
  auto& p = t.processes[0];
  p.info.pid = 42;
  for (int i = 0; i < 4; ++i) {
    model::DeviceSample s;
    s.time = 1000 * i;
    s.process_used_bytes = i == 3 ? -1 : (1ll << 30) * (i + 1);
    s.device_used_bytes = (2ll << 30) * (i + 1);
    s.device_total_bytes = 80ll << 30;
    s.gpu_utilization = i < 2 ? 50 + 10 * i : -1;
    p.device_samples.push_back(s);
  }
  auto r = analyzeNvml(t);
  REQUIRE(r.devices.size() == 1);
  const auto& d = r.devices[0];
  CHECK(d.pid == 42);
  CHECK(d.samples == 4);
  CHECK(d.process_used_peak_bytes == 3ll << 30);
  CHECK(d.device_used_peak_bytes == 8ll << 30);
  CHECK(d.gpu_utilization_mean == Approx(55));
  JobAnalysis a = analyzeJob(t);
  std::vector<Recommendation> recs;
  auto j = buildReportJson({a, recs});
  REQUIRE(j.contains("device_samples"));
  CHECK(j["device_samples"][0]["process_used_peak_bytes"] == 3ll << 30);
  CHECK(j["device_samples"][0]["gpu_utilization_ratio"] == Approx(0.55));
}
