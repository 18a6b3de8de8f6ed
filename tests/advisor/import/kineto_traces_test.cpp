// Every file under $GPUWISE_TRACES_DIR/kineto (real traces recorded by other projects) against
// tests/data/kineto/reference.json, computed independently by tests/tools/kineto_reference.py:
// Chrome traces match its counts exactly and its GPU span and busy time within 1 us; the other
// files are refused with a line saying what they are; CPU-only ranks have no GPU records.
#include "advisor/import/kineto_importer.h"
#include "tests/advisor/import/import_test_util.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

using namespace gpuwise;
using namespace gpuwise::advisor;
namespace fs = std::filesystem;

namespace {

constexpr int64_t kToleranceNs = 1000;

nlohmann::json loadReference() {
  const auto path = fs::path(test::sourceDir()) / "tests/data/kineto/reference.json";
  std::ifstream in(path);
  REQUIRE(in.good());
  return nlohmann::json::parse(in);
}

std::vector<std::pair<std::string, std::string>> traceFiles(const fs::path& root) {
  std::vector<std::pair<std::string, std::string>> files; // relative name, full path
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (e.is_regular_file())
      files.emplace_back(fs::relative(e.path(), root).string(), e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

} // namespace

// On the full set, or on the subset in tests/data/traces where it is absent: every file present is
// held to the reference; the folder's totals are checked on the full set.
TEST_CASE("every shared Kineto trace imports as the reference says, or is refused") {
  const fs::path root = fs::path(test::tracesDir()) / "kineto";
  const bool full = gpuwise::test::haveFullTraces();
  const auto reference = loadReference();
  const auto& expected = reference.at("files");
  const auto files = traceFiles(root);
  REQUIRE_FALSE(files.empty());
  if (full)
    REQUIRE(files.size() == expected.size()); // regenerate reference.json when the folder changes

  size_t chrome = 0, refused = 0, cpuOnly = 0, withGpu = 0;
  for (const auto& [rel, path] : files) {
    INFO(rel);
    REQUIRE(expected.contains(rel));
    const auto& ref = expected.at(rel);
    const auto r = importKineto({path});
    CHECK(r.error.find('\n') == std::string::npos);

    if (!ref.at("chrome_trace").get<bool>()) {
      ++refused;
      CHECK_FALSE(r.ok());
      CHECK(r.trace.processes.empty());
      CHECK(r.error.rfind(path + ": ", 0) == 0);
      const std::string what = ref.at("what");
      if (what.find("execution trace") != std::string::npos)
        CHECK(r.error.find("PyTorch execution trace") != std::string::npos);
      if (what.find("memory timeline") != std::string::npos)
        CHECK(r.error.find("PyTorch memory timeline") != std::string::npos);
      continue;
    }
    ++chrome;
    INFO(r.error);
    REQUIRE(r.ok());
    REQUIRE(r.trace.processes.size() == 1);
    const auto& p = r.trace.processes[0];
    CHECK(p.kernels.size() == ref.at("kernel_count").get<size_t>());
    CHECK(p.copies.size() == ref.at("memcpy_count").get<size_t>());
    CHECK(p.memsets.size() == ref.at("memset_count").get<size_t>());
    const auto steps = std::count_if(p.ranges.begin(), p.ranges.end(), [](const model::Range& x) {
      return x.kind == model::RangeKind::Step;
    });
    CHECK(steps == ref.at("profiler_steps").get<long>());
    if (!ref.at("rank").is_null()) CHECK(p.info.rank == ref.at("rank").get<int>());

    const auto all = test::unionSpan(test::gpuIntervals(p));
    if (p.kernels.empty() && p.copies.empty() && p.memsets.empty()) {
      ++cpuOnly;
      CHECK(ref.at("gpu_span_ns").get<int64_t>() == 0);
      CHECK(p.devices.empty());
      continue;
    }
    ++withGpu;
    CHECK(std::abs(all.span - ref.at("gpu_span_ns").get<int64_t>()) <= kToleranceNs);
    CHECK(std::abs(all.busy - ref.at("gpu_busy_ns").get<int64_t>()) <= kToleranceNs);
    if (!ref.at("gpu_idle_ratio").is_null() && all.span > 0)
      CHECK(1.0 - double(all.busy) / double(all.span) ==
            Approx(ref.at("gpu_idle_ratio").get<double>()).margin(0.002));
    for (const auto& [device, d] : ref.at("devices").items()) {
      INFO("device " << device);
      const auto one = test::unionSpan(test::gpuIntervals(p, std::stoi(device)));
      CHECK(std::abs(one.span - d.at("gpu_span_ns").get<int64_t>()) <= kToleranceNs);
      CHECK(std::abs(one.busy - d.at("gpu_busy_ns").get<int64_t>()) <= kToleranceNs);
      CHECK(p.device(uint32_t(std::stoi(device))) != nullptr); // every active device is described
    }
  }
  if (!full) return; // the subset: each of its files was held to the reference above
  CHECK(chrome == 47);
  CHECK(refused == 2);
  CHECK(cpuOnly >= 4); // cpu_only, rank_non_gpu, rank_unavailable, distributed_info_unavailable ...
  CHECK(withGpu >= 40);
}

TEST_CASE("all ranks of a job import together, one process each", "[.full_traces]") {
  const fs::path dir = gpuwise::test::requireFullTraces("kineto/hta/trace_filter");
  const auto r = importKineto(
      {(dir / "sampled_rank-0.json.gz").string(), (dir / "sampled_rank-1.json.gz").string()});
  INFO(r.error);
  REQUIRE(r.ok());
  REQUIRE(r.trace.processes.size() == 2);
  CHECK(r.trace.processes[0].info.rank == 0);
  CHECK(r.trace.processes[1].info.rank == 1);
  CHECK(r.trace.processes[0].info.world_size == 128);
  CHECK(r.trace.processes[0].kernels.size() == 1154);
  CHECK(r.trace.processes[1].kernels.size() == 1104);
}

TEST_CASE("real traces: joins, syncs and devices look like the GPU they came from",
          "[.full_traces]") {
  const fs::path root = gpuwise::test::requireFullTraces("kineto");
  SECTION("A100 with NCCL: launches joined, collectives flagged") {
    const auto r = importKineto({(root / "hta/nccl_parser_config/nccl_data.json.gz").string()});
    REQUIRE(r.ok());
    const auto& p = r.trace.processes[0];
    size_t joined = 0, nccl = 0;
    for (const auto& k : p.kernels) {
      joined += k.launch_start != 0 && k.launch_start <= k.start;
      nccl += (k.flags & model::kKernelCommunication) != 0;
    }
    CHECK(joined == p.kernels.size());
    CHECK(nccl > 0);
    REQUIRE(p.devices.size() == 1);
    CHECK(p.devices[0].name == "NVIDIA A100-PG509-200");
    CHECK(p.devices[0].sm_count == 108);
    CHECK(p.devices[0].compute_major == 8);
  }
  SECTION("V100 2021 ResNet-50: occupancy, pageable copies, steps 5..10") {
    const auto r = importKineto(
        {(root / "kineto_tb_plugin/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz")
             .string()});
    REQUIRE(r.ok());
    const auto& p = r.trace.processes[0];
    size_t withOcc = 0;
    for (const auto& k : p.kernels)
      withOcc += k.achieved_occupancy >= 0;
    CHECK(withOcc > p.kernels.size() / 2);
    size_t pageable = 0;
    for (const auto& c : p.copies)
      pageable += c.src == model::MemoryKind::Pageable;
    CHECK(pageable > 0);
    std::vector<int64_t> steps;
    for (const auto& x : p.ranges)
      if (x.kind == model::RangeKind::Step) steps.push_back(x.step);
    CHECK(steps == std::vector<int64_t>{5, 6, 7, 8, 9, 10});
    CHECK(std::count_if(p.ranges.begin(), p.ranges.end(),
                        [](auto& x) { return x.kind == model::RangeKind::DataLoader; }) == 6);
  }
  SECTION("ns-resolution V100 trace: fractional timestamps kept") {
    const auto r = importKineto(
        {(root / "hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz").string()});
    REQUIRE(r.ok());
    size_t fractional = 0;
    for (const auto& k : r.trace.processes[0].kernels)
      fractional += k.start % 1000 != 0;
    CHECK(fractional > 0);
  }
  SECTION("AMD MI300X and MTIA traces name their vendor") {
    const auto amd = importKineto(
        {(root / "tracelens/perf_model/normalization/normalization_layer_test.json.gz").string()});
    REQUIRE(amd.ok());
    REQUIRE_FALSE(amd.trace.processes[0].devices.empty());
    CHECK(amd.trace.processes[0].devices[0].name.find("AMD") != std::string::npos);
    const auto mtia =
        importKineto({(root / "hta/mtia_inference_trace/mtia_inference_rank_0.json.gz").string()});
    REQUIRE(mtia.ok());
    REQUIRE(mtia.trace.processes[0].devices.size() == 1);
    CHECK(mtia.trace.processes[0].devices[0].name == "MTIA ARTEMIS");
  }
  SECTION("H100 with memory profiling: samples of allocated and reserved bytes") {
    const auto r =
        importKineto({(root / "tracelens/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz").string()});
    REQUIRE(r.ok());
    const auto& p = r.trace.processes[0];
    REQUIRE_FALSE(p.memory_samples.empty());
    int64_t peak = 0;
    for (const auto& m : p.memory_samples)
      peak = std::max(peak, m.reserved_bytes);
    CHECK(peak > int64_t(1) << 30);
  }
}
