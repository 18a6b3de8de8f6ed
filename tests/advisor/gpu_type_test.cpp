// The GPU class table, the step-time model across classes and right_size_gpu_type:
//   - the table answers the older lookups as they answered (math throughput, links, MIG, prices)
//     and parses price overrides;
//   - a planted trace (a model::Trace through analyzeJob) with one kernel or copy per term of the
//     model: each term's prediction on another class is its measured time x the rate ratio, SM fill
//     carries over by SM count, the step keeps its idle time;
//   - the rule on planted jobs (issue 22's Done-when): a small memory-bound BF16 job on an H100
//     that idles on the host moves to a cheaper class with its predicted slowdown; a compute-bound
//     BF16 job does not; a job whose peak does not fit the cheaper classes does not;
//   - the report's gpu_types section and the HTML table of every class.
#include "advisor/analysis/job_analysis.h"
#include "advisor/cost/gpu_prices.h"
#include "advisor/gpu/gpu_type_choice.h"
#include "advisor/report/format.h"
#include "advisor/report/html_report.h"
#include "advisor/report/report_json.h"
#include "advisor/rules/gpu_tables.h"
#include "advisor/rules/right_size_gpu_type_rule.h"
#include "advisor/rules/rule_set.h"
#include "tests/advisor/number_check.h"
#include "tests/advisor/trace_builder.h"

#include <catch2/catch.hpp>

using namespace gpuwise;
using namespace gpuwise::advisor;
using namespace gpuwise::advisor::test;

namespace {

const char* const kBf16Gemm = "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_tn";
const char* const kFp32Gemm = "volta_sgemm_128x64_nn";
const char* const kBf16Add =
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, "
    "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, "
    "at::detail::Array<char*, 3>)";
const char* const kAllReduce =
    "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";

const GpuClass& cls(const char* name) {
  const GpuClass* c = gpuClassNamed(name);
  REQUIRE(c);
  return *c;
}

// Kernels back to back on one stream from t, each followed by `gap` idle (from 1 ms: a record
// starting at 0 has no GPU time).
struct Planted {
  model::ProcessTrace p = process(1);
  model::TimeNs t = kMs;
  // A grid of many waves (the SM fill test sets its own): fills every class's SMs.
  void kernel(const char* name, model::TimeNs ns, model::TimeNs gap = 0) {
    p.kernels.push_back(test::kernel(t, t + ns, 7, 0, p.names.intern(name)));
    p.kernels.back().grid = {100'000, 1, 1};
    p.kernels.back().block = {256, 1, 1};
    t += ns + gap;
  }
  void copy(model::CopyDirection d, model::TimeNs ns, model::TimeNs gap = 0) {
    p.copies.push_back(test::copy(t, t + ns, 64 << 20, d, model::MemoryKind::Pinned));
    t += ns + gap;
  }
  JobAnalysis analyze(double peak_gb) const {
    JobAnalysis a = analyzeJob(trace(p));
    DeviceMemory m;
    m.pid = 1;
    m.peak_bytes = uint64_t(peak_gb * 1e9);
    m.memory_total_bytes = 80'000'000'000ull;
    a.memory.devices = {m};
    return a;
  }
};

const StepTimeTerm* term(const StepPrediction& p, std::string_view name) {
  for (const auto& t : p.terms)
    if (t.name == name) return &t;
  return nullptr;
}

double ev(const Recommendation& r, const char* key) {
  return r.evidence.at(key).get<double>();
}

// The contract of every recommendation (as rules_each_test.cpp checks it): a known id, a saving
// in [0, 1], an action, parameters, and every number of its title and action in its evidence.
void checkContract(const Recommendation& r) {
  INFO(r.id << ": " << r.title << "\n" << r.action);
  CHECK(isKnownRecommendationId(r.id));
  CHECK(r.expected_saving_ratio >= 0.0);
  CHECK(r.expected_saving_ratio <= 1.0);
  CHECK(!r.action.empty());
  CHECK(!r.parameters.empty());
  CHECK(r.evidence.contains("expected_saving_ratio"));
  CHECK(numbersMissingFromEvidence(r.title, r.evidence).empty());
  CHECK(numbersMissingFromEvidence(r.action, r.evidence).empty());
}

std::optional<Recommendation> evaluate(const JobAnalysis& a, const Thresholds& t = {}) {
  return RightSizeGpuTypeRule().evaluate(RuleContext{a, nullptr, t});
}

// A small job: per 10 ms of GPU work, 8 ms of BF16 elementwise kernels and 2 ms of BF16 GEMM,
// and 40 ms of host time between: busy 200 of 960 ms.
JobAnalysis smallMemoryBoundJob(double peak_gb) {
  Planted j;
  for (int i = 0; i < 20; ++i) {
    j.kernel(kBf16Add, 8 * kMs);
    j.kernel(kBf16Gemm, 2 * kMs, i < 19 ? 40 * kMs : 0); // the span ends on a kernel
  }
  return j.analyze(peak_gb);
}

} // namespace

TEST_CASE("the GPU class table answers the older lookups and holds every class of the issue") {
  for (const char* name : {"B200", "H200", "H100 SXM", "H100 PCIe", "A100 80GB", "A100 40GB",
                           "L40S", "L4", "A10G", "V100", "MI300X"}) {
    const GpuClass& c = cls(name);
    INFO(name);
    CHECK(c.memory_gb > 0);
    CHECK(c.hbm_gb_per_s > 0);
    CHECK(c.fp32_tflops > 0);
    CHECK(c.sm_count > 0);
    CHECK(c.board_power_w > 0);
    CHECK(c.pcie_gb_per_s > 0);
  }
  CHECK(std::string(findGpuClass("NVIDIA H100 80GB HBM3")->name) == "H100 SXM");
  CHECK(std::string(findGpuClass("NVIDIA H100 PCIe")->name) == "H100 PCIe");
  CHECK(std::string(findGpuClass("NVIDIA H100 NVL")->name) == "H100 NVL");
  CHECK(std::string(findGpuClass("NVIDIA A100-SXM4-80GB")->name) == "A100 80GB");
  CHECK(std::string(findGpuClass("NVIDIA A100-PCIE-40GB")->name) == "A100 40GB");
  CHECK(std::string(findGpuClass("NVIDIA A100", 81'000'000'000ull)->name) == "A100 80GB");
  CHECK(std::string(findGpuClass("NVIDIA L40S")->name) == "L40S");
  CHECK(std::string(findGpuClass("NVIDIA L4")->name) == "L4");
  CHECK(std::string(findGpuClass("NVIDIA A10G")->name) == "A10G");
  CHECK(std::string(findGpuClass("Tesla V100-DGXS-32GB")->name) == "V100");
  CHECK(std::string(findGpuClass("AMD Instinct MI300X")->name) == "MI300X");
  CHECK(findGpuClass("NVIDIA GeForce RTX 3090") == nullptr);
  // The views: the precision rules' throughput, the links, MIG and the prices read the same rows.
  CHECK(mathThroughputFor("NVIDIA H100 80GB HBM3", 9, 0).bf16_tensor_tflops ==
        cls("H100 SXM").bf16_tensor_tflops);
  CHECK(linkBandwidthFor("NVIDIA A100-SXM4-80GB").nvlink_gb_per_s == 300);
  CHECK(linkBandwidthFor("NVIDIA A100-PCIE-40GB").nvlink_gb_per_s == 0);
  CHECK(std::string(migGpuFor("NVIDIA H200", 141'000'000'000ull).model) == "H200-141GB");
  CHECK(lookupGpuPrice("NVIDIA L4")->usd_per_hour == cls("L4").usd_per_hour);
  CHECK(lookupGpuPrice("NVIDIA L40S") == std::nullopt); // unpriced: --gpu-price L40S=USD
}

TEST_CASE("price overrides: flags and a file replace or add a class's price") {
  PriceOverrides p;
  std::string e;
  REQUIRE(parsePriceOverride("L40S=1.86", p, &e));
  REQUIRE(parsePriceOverride("A100 80GB 4.5", p, &e));
  CHECK(*p.priceOf(cls("L40S"), false) == Approx(1.86));
  CHECK(*p.priceOf(cls("A100 80GB"), false) == Approx(4.5));
  CHECK(*p.priceOf(cls("L4"), false) == Approx(cls("L4").usd_per_hour));
  CHECK(p.priceOf(cls("A10"), false) == std::nullopt);
  p.current_gpu = 2.0; // --gpu-hour-price prices the job's own GPU
  CHECK(*p.priceOf(cls("H100 SXM"), true) == Approx(2.0));
  CHECK(*p.priceOf(cls("H100 SXM"), false) == Approx(cls("H100 SXM").usd_per_hour));
  // A price row of several classes prices each of them: "H100" is the SXM, NVL and PCIe.
  PriceOverrides h100;
  REQUIRE(parsePriceOverride("H100=2.10", h100, &e));
  for (const char* c : {"H100 SXM", "H100 NVL", "H100 PCIe"})
    CHECK(*h100.priceOf(cls(c), false) == Approx(2.10));
  CHECK(*h100.priceOf(cls("H200"), false) == Approx(cls("H200").usd_per_hour));
  CHECK_FALSE(parsePriceOverride("TPU=1", p, &e));
  CHECK(e.find("unknown GPU class 'TPU'") != std::string::npos);
  CHECK_FALSE(parsePriceOverride("L4=-1", p, &e));
  CHECK_FALSE(parsePriceOverride("L4=cheap", p, &e));
  PriceOverrides f;
  REQUIRE(parsePriceFile("# our contract\nL4 0.5\n\nT4=0.35  # spot\n", f, &e));
  CHECK(*f.priceOf(cls("T4"), false) == Approx(0.35));
  CHECK_FALSE(parsePriceFile("L4 0.5\nnonsense\n", f, &e));
  CHECK(e.find("line 2") == 0);
}

TEST_CASE("step-time model: each term scales with its own rate on the target (planted trace)") {
  Planted j;
  j.kernel(kBf16Gemm, 10 * kMs);
  j.kernel(kFp32Gemm, 5 * kMs);
  j.kernel(kBf16Add, 4 * kMs, 5 * kMs); // 5 ms of idle: host time, unchanged
  j.kernel(kAllReduce, 2 * kMs);
  j.copy(model::CopyDirection::HostToDevice, 3 * kMs);
  j.copy(model::CopyDirection::DeviceToDevice, 1 * kMs);
  const JobAnalysis a = j.analyze(4);
  REQUIRE(a.timeline.busy_ns == 25 * kMs);
  REQUIRE(a.timeline.span_ns == 30 * kMs);
  const GpuClass &h100 = cls("H100 SXM"), &l4 = cls("L4");
  const StepPrediction p = predictStepTime(a, h100, l4);
  REQUIRE(p.supported);
  auto check = [&](const char* name, double ms, double rate_ratio) {
    INFO(name);
    const StepTimeTerm* t = term(p, name);
    REQUIRE(t);
    CHECK(t->seconds == Approx(ms / 1e3));
    CHECK(t->predicted_seconds == Approx(ms / 1e3 * rate_ratio));
  };
  check("tensor.bf16", 10, h100.bf16_tensor_tflops / l4.bf16_tensor_tflops);
  check("simt.fp32", 5, h100.fp32_tflops / l4.fp32_tflops);
  check("memory", 4, h100.hbm_gb_per_s / l4.hbm_gb_per_s);
  check("communication", 2, h100.nvlink_gb_per_s / l4.pcie_gb_per_s); // L4: no NVLink
  check("copies.host_link", 3, h100.pcie_gb_per_s / l4.pcie_gb_per_s);
  check("copies.device", 1, h100.hbm_gb_per_s / l4.hbm_gb_per_s);
  double predicted = 0;
  for (const auto& t : p.terms)
    predicted += t.predicted_seconds;
  CHECK(p.busy_scale == Approx(predicted / 0.025));
  CHECK(std::string(p.step_basis) == "gpu_span");
  // Host time and gaps unchanged: 5 ms idle plus the predicted busy time.
  CHECK(p.predicted_step_seconds == Approx(0.005 + predicted));
  // The class it ran on predicts what was measured.
  const StepPrediction same = predictStepTime(a, h100, h100);
  CHECK(same.predicted_step_seconds == Approx(0.030));
  CHECK(same.slowdown() == Approx(1.0));

  SECTION("precisions a class lacks: unsupported, or TF32's fallback to FP32 SIMT") {
    const StepPrediction v = predictStepTime(a, h100, cls("V100"));
    CHECK_FALSE(v.supported);
    CHECK(v.unsupported == "no bf16 tensor cores");
  }
}

TEST_CASE("step-time model: SM fill carries over by SM count") {
  Planted j;
  j.kernel(kBf16Add, 10 * kMs);
  // 66 blocks of 1024 threads: 2 resident per H100 SM, a quarter of one wave of 264 slots.
  j.p.kernels.back().grid = {66, 1, 1};
  j.p.kernels.back().block = {1024, 1, 1};
  j.p.kernels.back().registers_per_thread = 32;
  const JobAnalysis a = j.analyze(1);
  REQUIRE(a.kernels.by_name.size() == 1);
  REQUIRE(a.kernels.by_name[0].occupancy.smFill());
  REQUIRE(*a.kernels.by_name[0].occupancy.smFill() == Approx(0.25));
  const GpuClass &h100 = cls("H100 SXM"), &l4 = cls("L4"), &b200 = cls("B200");
  // 33 SMs' worth of blocks: 57% of the L4's 58 SMs, 22% of the B200's 148.
  const double on_l4 = 0.010 * h100.hbm_gb_per_s / l4.hbm_gb_per_s * (0.25 / (33.0 / 58));
  const double on_b200 = 0.010 * h100.hbm_gb_per_s / b200.hbm_gb_per_s * (0.25 / (33.0 / 148));
  CHECK(term(predictStepTime(a, h100, l4), "memory")->predicted_seconds == Approx(on_l4));
  CHECK(term(predictStepTime(a, h100, b200), "memory")->predicted_seconds == Approx(on_b200));
  CHECK(term(predictStepTime(a, h100, h100), "memory")->predicted_seconds == Approx(0.010));
}

TEST_CASE("step-time model: FP32 convolutions from a GPU without TF32 run TF32 where it exists") {
  Planted j;
  j.p.devices[0].name = "Tesla V100-SXM2-32GB";
  j.p.devices[0].sm_count = 80;
  j.p.devices[0].compute_major = 7;
  j.kernel("volta_scudnn_128x64_relu_interior_nn_v1", 6 * kMs);
  j.kernel(kFp32Gemm, 4 * kMs);
  const JobAnalysis a = j.analyze(1);
  const GpuClass &v100 = cls("V100"), &a100 = cls("A100 80GB");
  const StepPrediction p = predictStepTime(a, v100, a100);
  // Both are simt.fp32 on the V100; the convolution runs at the A100's TF32 rate, the GEMM at its
  // FP32 rate (torch.backends.cuda.matmul.allow_tf32 defaults to False).
  CHECK(term(p, "simt.fp32")->predicted_seconds ==
        Approx(0.006 * v100.fp32_tflops / a100.tf32_tensor_tflops +
               0.004 * v100.fp32_tflops / a100.fp32_tflops));
}

TEST_CASE(
    "right_size_gpu_type: a small memory-bound BF16 job on an H100 moves to a cheaper class") {
  const JobAnalysis a = smallMemoryBoundJob(4);
  auto r = evaluate(a);
  REQUIRE(r);
  checkContract(*r);
  const GpuClass &h100 = cls("H100 SXM"), &a100 = cls("A100 40GB");
  CHECK(r->parameters["gpu"] == "A100 40GB");
  // The repeating launches are inferred steps of 50 ms, 10 of them busy; on the A100 40GB the
  // busy part scales by its HBM and BF16 ratios, the 40 ms of host time stays.
  REQUIRE(r->evidence["step_basis"] == "steady_step_p50");
  const double step = 0.050;
  CHECK(ev(*r, "step_seconds") == Approx(step));
  const double scale = 0.8 * h100.hbm_gb_per_s / a100.hbm_gb_per_s +
                       0.2 * h100.bf16_tensor_tflops / a100.bf16_tensor_tflops;
  CHECK(ev(*r, "predicted_busy_scale") == Approx(scale));
  const double predicted = r->parameters["predicted_step_seconds"].get<double>();
  // The steady steps' busy share (about 10 of 50 ms) is what scales.
  CHECK((predicted / step - 1) / (scale - 1) == Approx(0.2).margin(0.01));
  CHECK(ev(*r, "predicted_slowdown") == Approx(predicted / step));
  CHECK(ev(*r, "predicted_slowdown") <= 1.3);
  const double now = h100.usd_per_hour * step / 3600, then = a100.usd_per_hour * predicted / 3600;
  CHECK(r->parameters["cost_per_step_current"].get<double>() == Approx(now));
  CHECK(r->parameters["cost_per_step_target"].get<double>() == Approx(then));
  CHECK(r->expected_saving_ratio == Approx(1 - then / now));
  CHECK(r->explains.part == "gpu.class");
  CHECK(r->confidence == Confidence::Medium); // steps, and every kernel's precision known
  CHECK(r->action.find("nvidia.com/gpu.product: NVIDIA-A100-40GB") != std::string::npos);

  SECTION("the accepted slowdown is the user's") {
    Thresholds strict;
    strict.gpu_type.max_slowdown = 1.1;
    CHECK_FALSE(evaluate(a, strict));
    Thresholds cheap_l4;
    // Up to 4x slower: the A10G (5.6x the memory time, 14x the GEMM time, $1.01) beats the L4
    // (11x and 8.2x, $0.80) per step.
    cheap_l4.gpu_type.max_slowdown = 4.0;
    auto small = evaluate(a, cheap_l4);
    REQUIRE(small);
    CHECK(small->parameters["gpu"] == "A10G");
  }
  SECTION("a price file can make another class the cheapest") {
    Thresholds t;
    t.gpu_type.prices.by_class = {{"A100 80GB", 1.0}};
    auto r80 = evaluate(a, t);
    REQUIRE(r80);
    CHECK(r80->parameters["gpu"] == "A100 80GB");
  }
  SECTION("the rule runs in the default set, and the class table says why the others do not") {
    auto recs = evaluateRules(defaultRules(), RuleContext{a, nullptr, Thresholds{}});
    CHECK(std::any_of(recs.begin(), recs.end(),
                      [](const auto& x) { return x.id == "right_size_gpu_type"; }));
    // A fix for the idle GPU comes first: the slower class's share of the step grows with it.
    std::vector<Recommendation> both(2);
    both[0].id = "prefetch_input";
    both[1].id = "right_size_gpu_type";
    resolveConflicts(both);
    REQUIRE(both.size() == 1);
    CHECK(both[0].id == "prefetch_input");
    const auto c = compareGpuTypes(a, {});
    for (const auto& o : c.options) {
      INFO(o.gpu->name);
      if (std::string_view(o.gpu->name) == "L4")
        CHECK(o.reason == "slower than the accepted slowdown");
      if (std::string_view(o.gpu->name) == "H100 NVL")
        CHECK(o.reason == "not cheaper per GPU-hour");
      if (std::string_view(o.gpu->name) == "L40S") CHECK(o.reason.find("no price") == 0);
      if (std::string_view(o.gpu->name) == "MI300X") CHECK(o.reason.find("an AMD GPU") == 0);
    }
  }
}

TEST_CASE("right_size_gpu_type: quiet for a compute-bound job and for a peak that does not fit") {
  SECTION("a large compute-bound BF16 job: every cheaper class is far slower") {
    Planted j;
    for (int i = 0; i < 50; ++i) {
      j.kernel(kBf16Gemm, 18 * kMs);
      j.kernel(kBf16Add, 2 * kMs, kMs / 2);
    }
    const JobAnalysis a = j.analyze(60);
    CHECK_FALSE(evaluate(a));
    const auto c = compareGpuTypes(a, {});
    for (const auto& o : c.options)
      if (std::string_view(o.gpu->name) == "A100 80GB")
        CHECK(o.prediction.slowdown() > 2.5); // 990 / 312 TFLOPS on 90% of the time
  }
  SECTION("the small job with a 75 GB peak: only dearer classes hold it") {
    const JobAnalysis a = smallMemoryBoundJob(75);
    CHECK_FALSE(evaluate(a));
    for (const auto& o : compareGpuTypes(a, {}).options)
      if (std::string_view(o.gpu->name) == "A100 80GB")
        CHECK(o.reason == "memory: the peak with headroom does not fit");
  }
  SECTION("several ranks on NVLink GPUs: a class without NVLink does not qualify") {
    JobAnalysis a = smallMemoryBoundJob(4);
    a.distributed.world_size = 2;
    for (const auto& o : compareGpuTypes(a, {}).options)
      if (std::string_view(o.gpu->name) == "L4") CHECK(o.reason.find("no NVLink") == 0);
  }
  SECTION("peak memory unknown, a MIG slice, the simulated device: nothing") {
    JobAnalysis a = smallMemoryBoundJob(4);
    a.memory.devices.clear();
    CHECK_FALSE(evaluate(a));
    JobAnalysis m = smallMemoryBoundJob(4);
    m.collection.gpus[0].info.mig_profile = "3g.40gb";
    CHECK_FALSE(evaluate(m));
    JobAnalysis s = smallMemoryBoundJob(4);
    s.source.simulated = true;
    CHECK_FALSE(evaluate(s));
  }
}

TEST_CASE("the report lists every GPU class for the job: gpu_types in JSON, a table in HTML") {
  const JobAnalysis a = smallMemoryBoundJob(4);
  const auto advice = advise(a, nullptr);
  const ReportInput input{a, advice.recommendations, &advice.notes};
  const auto json = buildReportJson(input);
  const auto& g = json.at("gpu_types");
  CHECK(g.at("current") == "H100 SXM");
  CHECK(g.at("chosen") == "A100 40GB");
  CHECK(g.at("classes").size() == gpuClassTable().size());
  for (const auto& c : g.at("classes"))
    if (c.at("gpu") == "V100") CHECK(c.at("reason") == "no bf16 tensor cores");
  const std::string html = renderHtmlReport(input);
  const size_t section = html.find("<h2 id=\"gpu-types-h\">GPU classes</h2>");
  REQUIRE(section != std::string::npos);
  const std::string table = html.substr(section, html.find("</section>", section) - section);
  for (const auto& c : gpuClassTable())
    CHECK(table.find(std::string("<tr><td>") + c.name + "</td>") != std::string::npos);
  CHECK(table.find("<td>recommended</td>") != std::string::npos);
  CHECK(table.find("<td>the job&#39;s GPU</td>") != std::string::npos);
}
