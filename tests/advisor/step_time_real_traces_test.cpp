// The step-time model across GPU classes on a real trace (ResNet-50 training in FP32 on a Tesla
// V100-DGXS-32GB, kineto_tb_plugin/resnet50_num_workers_4, in the committed subset too):
//   - every class's predicted GPU busy time over the measured one equals the independent Python
//     reference (tests/tools/step_time_reference.py -> tests/data/kineto/step_time_reference.json)
//     within 0.5% (its own occupancy arithmetic and microsecond decimals);
//   - against public measurements of the same model on two classes: NVIDIA's Deep Learning
//     Examples, ResNet50 v1.5 for PyTorch, "Training performance results" (pytorch-21.03 NGC
//     container, 1 GPU; https://github.com/NVIDIA/DeepLearningExamples/blob/master/PyTorch/
//     Classification/ConvNets/resnet50v1.5/README.md, commit 291f0d02): DGX-1 32GB (V100 32GB)
//     FP32 356 img/s, DGX A100 (A100 80GB) TF32 938 img/s. Those runs keep the GPU busy (DALI
//     loaders), so the figure to compare is the GPU time per image: A100 / V100 = 356 / 938.
//     The model's error is printed and must stay within the bound stated in README.md;
//   - against a second source, one benchmark run on every class it lists: Lambda's PyTorch
//     training benchmarks (https://github.com/lambdal/deeplearning-benchmark, file
//     pytorch/pytorch-train-throughput-fp32.csv at commit 0551cb70ffdc155dc4cb2c10dddebb65651c3883,
//     the `resnet50` column, 1 GPU, img/s; NVIDIA's DLE ResNet-50 in NGC PyTorch containers):
//     "LambdaCloud V100 16GB" 369, "A100 80GB SXM4" 1066, "H100 80GB PCIe Gen5" 1197, "H100 80GB
//     SXM5" 1753. Batch sizes (pytorch/pytorch-train-bs-fp32.csv, commit 08d77c41c42f48de5598b48c
//     77f3fbd1b6252348): V100 16GB 128, A100 80GB SXM4 and H100 PCIe 640 (the H100 SXM5 row is not
//     in that file). "fp32" is PyTorch's default precision: FP32 on the V100, TF32 convolutions
//     (cuDNN's default) on the A100 and H100, what the model assumes. The V100 16GB is the trace's
//     V100 32GB chip (same SMs, clocks and 900 GB/s). Each pair's error is pinned to the figure the
//     README states (within a point) and bounded.
#include "advisor/analysis/job_analysis.h"
#include "advisor/gpu/gpu_type_choice.h"
#include "advisor/import/kineto_importer.h"
#include "tests/traces_dir.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>

using namespace gpuwise;
using namespace gpuwise::advisor;
namespace fs = std::filesystem;

namespace {

constexpr const char* kTrace =
    "kineto/kineto_tb_plugin/resnet50_num_workers_4/worker0.1623212756351.pt.trace.json.gz";
constexpr double kReferenceTolerance = 0.005;
// Published (DLE, above): img/s on one GPU.
constexpr double kV100Fp32ImagesPerSecond = 356, kA100Tf32ImagesPerSecond = 938;
// Measured 2026-12-02: the model predicts 0.3334 of the V100's GPU time on the A100 80GB, the
// published ratio is 0.3795: -12.2% (a 14% higher throughput than published). The bound leaves
// room for table corrections, not for a model that doubles its error.
constexpr double kMaxValidationError = 0.20;

// Lambda's benchmark (above): published img/s on one GPU, and the error the README states.
struct PublishedPair {
  const char* target;            // the class table's name
  double v100_images_per_second; // the source GPU, the same run
  double target_images_per_second;
  double readme_error; // measured 2026-12-02 (predicted / published - 1)
};
constexpr PublishedPair kLambda[] = {
    {"A100 80GB", 369, 1066, -0.037},
    {"H100 PCIe", 369, 1197, -0.180},
    {"H100 SXM", 369, 1753, -0.137},
};
// The README's figure may move by a point (table corrections), no more without updating it.
constexpr double kReadmeErrorTolerance = 0.01;

GpuTypeComparison compareOnTrace() {
  const fs::path path = gpuwise::test::requireTrace(kTrace);
  auto imported = importKineto({path.string()});
  INFO(imported.error);
  REQUIRE(imported.ok());
  const JobAnalysis a = analyzeJob(imported.trace);
  GpuTypeComparison c = compareGpuTypes(a, {});
  REQUIRE(c.current);
  REQUIRE(std::string(c.current->name) == "V100");
  return c;
}

double busyScale(const GpuTypeComparison& c, std::string_view gpu) {
  for (const auto& o : c.options)
    if (o.gpu->name == gpu) return o.prediction.busy_scale;
  FAIL("no class " << gpu);
  return 0;
}

} // namespace

TEST_CASE("step-time model equals the independent reference on ResNet-50 / V100") {
  const char* src = std::getenv("GPUWISE_SOURCE_DIR");
  std::ifstream in(fs::path(src && *src ? src : ".") /
                   "tests/data/kineto/step_time_reference.json");
  REQUIRE(in.good());
  const auto ref = nlohmann::json::parse(in);
  REQUIRE(ref.at("file") == kTrace);
  const auto c = compareOnTrace();
  size_t compared = 0;
  for (const auto& [gpu, want] : ref.at("predicted_busy_scale").items()) {
    INFO(gpu);
    CHECK(std::fabs(busyScale(c, gpu) / want.get<double>() - 1) <= kReferenceTolerance);
    ++compared;
  }
  CHECK(compared >= 10);
}

TEST_CASE("step-time model against published ResNet-50 training throughput, V100 -> A100") {
  const auto c = compareOnTrace();
  const double predicted = busyScale(c, "A100 80GB");
  const double published = kV100Fp32ImagesPerSecond / kA100Tf32ImagesPerSecond;
  const double error = predicted / published - 1;
  std::cout << "ResNet-50 training, V100 FP32 -> A100 80GB TF32: GPU time per image predicted "
            << predicted << " of the V100's, published " << published << " (DLE), error "
            << error * 100 << "%\n";
  CHECK(std::fabs(error) <= kMaxValidationError);
}

TEST_CASE("step-time model against a second source: V100 -> A100 80GB, H100 PCIe, H100 SXM") {
  const auto c = compareOnTrace();
  for (const auto& pair : kLambda) {
    INFO(pair.target);
    const double predicted = busyScale(c, pair.target);
    const double published = pair.v100_images_per_second / pair.target_images_per_second;
    const double error = predicted / published - 1;
    std::cout << "ResNet-50 training, V100 FP32 -> " << pair.target
              << " TF32: GPU time per image predicted " << predicted << " of the V100's, published "
              << published << " (Lambda), error " << error * 100 << "%\n";
    CHECK(std::fabs(error - pair.readme_error) <= kReadmeErrorTolerance);
    CHECK(std::fabs(error) <= kMaxValidationError);
  }
}
