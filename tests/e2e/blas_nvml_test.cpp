// End to end on the simulated device: the shim's cuBLAS precision probe and NVML device facts.
// `gpuwise run --simulate` around tests/e2e/blas_app.cpp, which calls the simulated
// libcublas/libcublasLt (built from tests/simdevice/cublas); the simulated libnvidia-ml.so.1 says
// which GPU, or (GWSIM_MIG_PROFILE) which MIG slice, the process runs on.
#include "tests/e2e/e2e_support.h"

#include <catch2/catch.hpp>

#include <set>

using namespace gpuwise::e2e;
using namespace std::chrono_literals;

namespace {

constexpr int kIterations = 10;

std::string blasApp() {
  return buildDir() + "/tests/e2e_blas_app";
}

json runBlasApp(const TempDir& dir, const std::vector<std::string>& env, const std::string& tag,
                std::string* err = nullptr) {
  Process p(
      gpuwise::advisor::test::simulatedRunArgv(dir, tag, {blasApp(), std::to_string(kIterations)}),
      env, dir.path, dir.path, tag);
  auto status = p.wait(60s);
  REQUIRE(status);
  INFO(p.err());
  REQUIRE(*status == 0);
  CHECK(contains(p.out(), "blas_app calls=" + std::to_string(5 * kIterations)));
  if (err) *err = p.err();
  return readJson(dir / (tag + ".json"));
}

bool hasRecommendation(const json& report, const std::string& id) {
  for (const auto& r : report["recommendations"])
    if (r["id"] == id) return true;
  return false;
}

} // namespace

TEST_CASE("cuBLAS calls carry their types to the report, which notes the kernel that disagrees") {
  TempDir dir;
  std::string err;
  json report = runBlasApp(dir, {}, "blas", &err);
  REQUIRE(report.is_object());
  INFO(report["precision"].dump(2));
  REQUIRE(report["precision"].contains("blas_probe"));
  const json& b = report["precision"]["blas_probe"];
  CHECK(b["calls"] == 5 * kIterations);
  CHECK(b["calls_with_kernels"] == 5 * kIterations);
  CHECK(b["agreeing_calls"] == 4 * kIterations);
  CHECK(b["disagreeing_calls"] == kIterations);
  CHECK(b["disagreeing_kernel_seconds"].get<double>() > 0);
  const json& first = b["kernels"][0];
  CHECK(first["api"] == "cublasGemmEx");
  CHECK(first["requested_precision"] == "tf32");
  CHECK(first["kernel_precision"] == "fp32");
  CHECK(first["agrees"] == false);
  CHECK(first["calls"] == kIterations);
  CHECK(first["types"] == "A=fp32 B=fp32 C=fp32 compute=32F math=TF32_TENSOR_OP");
  // Every API appears with the kernel that agrees with it.
  std::set<std::string> agreeing;
  for (const auto& k : b["kernels"])
    if (k["agrees"] == true)
      agreeing.insert(k["api"].get<std::string>() + ":" +
                      k["requested_precision"].get<std::string>());
  CHECK(agreeing == std::set<std::string>{"cublasGemmEx:tf32", "cublasGemmEx:fp16",
                                          "cublasGemmStridedBatchedEx:bf16",
                                          "cublasLtMatmul:bf16"});
  // The terminal summary says it too (lines are wrapped: join them first).
  std::string joined = std::regex_replace(err, std::regex(R"(\n\s+)"), " ");
  CHECK(contains(joined, "10 disagree (tf32 requested, fp32 kernel ran: cutlass_80_simt_sgemm"));
  // And the HTML report's precision section.
  std::string html = readFile(dir / "blas.html");
  CHECK(contains(html, "<p>cuBLAS calls: 50 recorded, 40 ran kernels whose names agree"));
  CHECK(contains(
      html,
      "asked for tf32; its kernel cutlass_80_simt_sgemm_128x128_8x4_nn_align1 is fp32 (10 calls)"));

  // NVML (simulated): the GPU's UUID, no MIG slice.
  REQUIRE(report["gpus"].size() == 1);
  CHECK(report["gpus"][0]["uuid"].get<std::string>().rfind("GPU-", 0) == 0);
  CHECK(report["gpus"][0]["mig_profile"].is_null());
  // Its samples: this process's memory (the 64 MiB it allocated plus the context), utilisation.
  REQUIRE(report.contains("device_samples"));
  const json& s = report["device_samples"][0];
  CHECK(s["samples"].get<int64_t>() >= 1);
  CHECK(s["process_used_peak_bytes"].get<int64_t>() >= (64ll << 20));
  CHECK(s["device_total_bytes"].get<int64_t>() == 150'754'820'096ll);
  CHECK(s["gpu_utilization_ratio"].get<double>() == Approx(0.42));
}

TEST_CASE(
    "on a MIG slice the report names the slice and right_size_mig does not shrink it further") {
  TempDir dir;
  json report = runBlasApp(dir, {"GWSIM_MIG_PROFILE=1g.18gb"}, "mig");
  REQUIRE(report.is_object());
  REQUIRE(report["gpus"].size() == 1);
  CHECK(report["gpus"][0]["mig_profile"] == "1g.18gb");
  CHECK(report["gpus"][0]["uuid"].get<std::string>().rfind("MIG-", 0) == 0);
  // 1g.18gb is the H200's smallest profile.
  CHECK_FALSE(hasRecommendation(report, "right_size_mig"));
  // A slice: its own memory, no utilisation figure.
  REQUIRE(report.contains("device_samples"));
  CHECK(report["device_samples"][0]["device_total_bytes"] == 18'000'000'000ll);
  CHECK(report["device_samples"][0]["gpu_utilization_ratio"].is_null());
}

TEST_CASE("when NVML does not initialise the run is the same, minus the device facts") {
  TempDir dir;
  // GWSIM_NVML=0: the simulated nvmlInit_v2 answers "driver not loaded".
  json report = runBlasApp(dir, {"GWSIM_NVML=0"}, "nonvml");
  REQUIRE(report.is_object());
  CHECK(report["gpus"][0]["uuid"].is_null());
  CHECK(report["gpus"][0]["mig_profile"].is_null());
  CHECK(report["precision"]["blas_probe"]["calls"] == 5 * kIterations);
  CHECK_FALSE(report.contains("device_samples"));
}
