// Every rule on a JobAnalysis built by hand: it fires with the numbers its formula gives, stays
// quiet on a healthy job, and behaves at the edge of its threshold; every number a person reads in
// a title or action is in the evidence; conflicts resolve as rule_set.h says.
#include "advisor/rules/gpu_tables.h"
#include "advisor/rules/increase_batch_size_rule.h"
#include "advisor/rules/precision_rules.h"
#include "advisor/rules/prefetch_input_rule.h"
#include "advisor/rules/reduce_host_syncs_rule.h"
#include "advisor/rules/reduce_memory_pressure_rule.h"
#include "advisor/rules/right_size_mig_rule.h"
#include "advisor/rules/rule_set.h"
#include "advisor/rules/share_gpu_rule.h"
#include "advisor/rules/use_cuda_graphs_rule.h"
#include "tests/advisor/number_check.h"

#include <catch2/catch.hpp>

using namespace gpuwise;
using namespace gpuwise::advisor;
using namespace gpuwise::advisor::test;
using profiler::Precision;

namespace {

constexpr model::TimeNs kSec = 1'000'000'000;

// One GPU, a 10 s span, fully busy, full SM fill, 10% of memory: a healthy job. Tests change the
// figure their rule reads.
JobAnalysis healthyJob(const std::string& gpu = "NVIDIA H100 80GB HBM3",
                       uint64_t memory = 80'000'000'000ull) {
  JobAnalysis a;
  GpuEntry g;
  g.info.name = gpu;
  g.info.sm_count = 132;
  g.info.memory_total_bytes = memory;
  g.info.compute_major = 9;
  a.collection.gpus.push_back(g);
  DeviceTimeline d;
  d.span_start = 0;
  d.span_end = 10 * kSec;
  a.timeline.devices.push_back(d);
  a.timeline.span_ns = 10 * kSec;
  a.timeline.busy_ns = 10 * kSec;
  a.timeline.kernel_busy_ns = 10 * kSec;
  a.timeline.timed_kernels = 10'000;
  a.timeline.short_kernels = 100;
  a.kernels.count = a.kernels.timed_count = 10'000;
  a.kernels.total_ns = 10 * kSec;
  a.kernels.occupancy.fill_timed_ns = 10 * kSec;
  a.kernels.occupancy.sm_fill_ns = 0.95 * 10 * kSec;
  a.precision.kernel_ns = 10 * kSec;
  a.precision.ns[size_t(Precision::Bf16)] = 10 * kSec;
  a.precision.tensor_core_ns = 9 * kSec;
  DeviceMemory m;
  m.pid = 1;
  m.peak_bytes = memory / 10;
  m.memory_total_bytes = memory;
  a.memory.devices.push_back(m);
  a.syncs.calls = 10;
  a.syncs.blocked_ns = 5 * kSec; // a GPU-bound host waits in syncs at no cost
  return a;
}

// Idle time by cause, taken out of busy time.
void idle(JobAnalysis& a, IdleCause cause, model::TimeNs ns, uint64_t gaps = 1000) {
  a.timeline.idle.ns[size_t(cause)] += ns;
  a.timeline.idle.gaps += gaps;
  a.timeline.busy_ns -= ns;
  a.timeline.kernel_busy_ns -= ns;
}

// A training loop: n steps of the given source covering the 10 s span, the job's input idle
// spread over them (so the step-based input stall ratio equals the span-based one).
void trainingLoop(JobAnalysis& a, StepSource source, size_t n = 100) {
  ProcessSteps p;
  p.pid = 1;
  p.source = source;
  p.devices = 1;
  const model::TimeNs step = 10 * kSec / model::TimeNs(n);
  for (size_t i = 0; i < n; ++i) {
    StepRecord s;
    s.number = int64_t(i);
    s.start = model::TimeNs(i) * step;
    s.end = s.start + step;
    s.idle_ns[size_t(IdleCause::Input)] = a.timeline.idle.at(IdleCause::Input) / model::TimeNs(n);
    p.steps.push_back(s);
  }
  a.steps.processes = {p};
}

std::optional<Recommendation> eval(const Rule& rule, const JobAnalysis& a,
                                   const Thresholds& t = {}) {
  return rule.evaluate(RuleContext{a, nullptr, t});
}

double ev(const Recommendation& r, const char* key) {
  INFO(key);
  REQUIRE(r.evidence.contains(key));
  return r.evidence[key].get<double>();
}

// The contract of every recommendation: a known id, a saving in [0, 1], an action, and every
// number of its title and action found in its evidence.
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

} // namespace

TEST_CASE("the healthy job gets no recommendation from any rule") {
  auto a = healthyJob();
  CHECK(evaluateRules(defaultRules(), RuleContext{a, nullptr, Thresholds{}}).empty());
}

TEST_CASE("prefetch_input: fires on input stalls with a suggested num_workers") {
  auto a = healthyJob();
  idle(a, IdleCause::Input, 4 * kSec); // r = 0.4: r/(1-r) = 0.67 -> 1 worker keeps up, +1
  trainingLoop(a, StepSource::Inferred);
  auto r = eval(PrefetchInputRule(), a);
  REQUIRE(r);
  checkContract(*r);
  CHECK(r->expected_saving_ratio == Approx(0.4));
  CHECK(ev(*r, "input_stall_seconds") == Approx(4.0));
  CHECK(r->parameters["num_workers"] == 2);
  CHECK(r->parameters["persistent_workers"] == true);
  CHECK(r->confidence == Confidence::Medium); // inferred, no DataLoader ranges
  CHECK(r->action.find("num_workers=2") != std::string::npos);
  CHECK(r->action.find("prefetch_factor=2") != std::string::npos);

  SECTION("a long stall asks for more workers, bounded") {
    auto b = healthyJob();
    idle(b, IdleCause::Input, 8 * kSec); // r/(1-r) = 4 -> 5
    trainingLoop(b, StepSource::ProfilerStep);
    CHECK(eval(PrefetchInputRule(), b)->parameters["num_workers"] == 5);
    auto c = healthyJob();
    idle(c, IdleCause::Input, model::TimeNs(9.99 * kSec));
    c.timeline.idle.input_data_loader_ns = c.timeline.idle.at(IdleCause::Input);
    CHECK(eval(PrefetchInputRule(), c)->parameters["num_workers"] == 16);
  }
  SECTION("measured inside DataLoader ranges: high confidence") {
    a.timeline.idle.input_data_loader_ns = 4 * kSec;
    CHECK(eval(PrefetchInputRule(), a)->confidence == Confidence::High);
  }
  SECTION("explains the input idle cause, and saves no more than it") {
    CHECK(r->explains.part == "idle.input");
    CHECK(r->explains.share() == Approx(0.4));
  }
}

TEST_CASE("prefetch_input: inferred input stall needs a training loop to be a loader problem") {
  auto a = healthyJob();
  idle(a, IdleCause::Input, 6 * kSec); // the host preparing data, no DataLoader range measured it
  CHECK_FALSE(eval(PrefetchInputRule(), a)); // no steps: a program, not a training loop
  trainingLoop(a, StepSource::Inferred, 5);  // a few repetitions (the MPI saxpy's 5 phases)
  CHECK_FALSE(eval(PrefetchInputRule(), a));
  trainingLoop(a, StepSource::Inferred, 60); // the input_stall sample's loop
  CHECK(eval(PrefetchInputRule(), a));
  trainingLoop(a, StepSource::Nvtx, 5); // annotated steps are a loop however few
  CHECK(eval(PrefetchInputRule(), a));
  auto b = healthyJob();
  idle(b, IdleCause::Input, 6 * kSec);
  b.timeline.idle.input_data_loader_ns = 6 * kSec; // measured inside DataLoader ranges
  CHECK(eval(PrefetchInputRule(), b));
}

TEST_CASE("prefetch_input: a stall that a few steps hold is a note, not a loader to tune") {
  // 2 s of input stall in a 10 s loop of 100 steps: 0.2 of step time either way.
  auto a = healthyJob();
  idle(a, IdleCause::Input, 2 * kSec);
  trainingLoop(a, StepSource::Inferred); // spread: every step waits 20 ms of its 100
  auto spread = eval(PrefetchInputRule(), a);
  REQUIRE(spread);
  CHECK_FALSE(spread->note_only);
  CHECK(ev(*spread, "stalled_step_share") == Approx(1.0));

  // The same 2 s in 5 steps (the host busy elsewhere for a moment): share 0.05.
  for (auto& s : a.steps.processes[0].steps)
    s.idle_ns[size_t(IdleCause::Input)] = s.number % 20 == 0 ? 400'000'000 : 0;
  auto held = eval(PrefetchInputRule(), a);
  REQUIRE(held);
  checkContract(*held);
  CHECK(held->note_only);
  CHECK(held->confidence == Confidence::Low);
  CHECK(ev(*held, "stalled_step_share") == Approx(0.05));
  CHECK(held->title.find("transient") != std::string::npos);
  const auto advice = advise(a, nullptr);
  CHECK(advice.recommendations.empty());
  REQUIRE(advice.notes.size() == 1);
  CHECK(advice.notes[0].id == "prefetch_input");

  // At the edge: a quarter of the steps stalled is a loader problem again.
  for (auto& s : a.steps.processes[0].steps)
    s.idle_ns[size_t(IdleCause::Input)] = s.number % 4 == 0 ? 80'000'000 : 0;
  auto quarter = eval(PrefetchInputRule(), a);
  REQUIRE(quarter);
  CHECK_FALSE(quarter->note_only);
}

TEST_CASE("prefetch_input: edge of the threshold") {
  Thresholds t;
  auto a = healthyJob();
  idle(a, IdleCause::Input, model::TimeNs(t.prefetch_input.min_ratio * 10 * kSec));
  a.timeline.idle.input_data_loader_ns = a.timeline.idle.at(IdleCause::Input);
  CHECK(eval(PrefetchInputRule(), a));
  auto b = healthyJob();
  idle(b, IdleCause::Input, model::TimeNs(t.prefetch_input.min_ratio * 10 * kSec) - 1000);
  b.timeline.idle.input_data_loader_ns = b.timeline.idle.at(IdleCause::Input);
  CHECK_FALSE(eval(PrefetchInputRule(), b));
}

TEST_CASE("enable_mixed_precision: FP32 GEMMs on an H100 move to BF16 tensor cores") {
  auto a = healthyJob();
  a.precision.ns = {};
  a.precision.ns[size_t(Precision::Fp32)] = 10 * kSec;
  a.precision.fp32_matmul_ns = 5 * kSec;
  a.precision.tensor_core_ns = 0;
  auto r = eval(EnableMixedPrecisionRule(), a);
  REQUIRE(r);
  checkContract(*r);
  // H100: 990 BF16 / 67 FP32 TFLOPS; 5 s of GEMMs save 5 x (1 - 67/990).
  CHECK(ev(*r, "fp32_to_tensor_speedup") == Approx(990.0 / 67.0));
  CHECK(r->expected_saving_ratio == Approx(0.5 * (1 - 67.0 / 990.0)));
  CHECK(r->parameters["autocast_dtype"] == "bfloat16");
  CHECK(r->action.find("torch.autocast(device_type=\"cuda\", dtype=torch.bfloat16)") !=
        std::string::npos);
  CHECK(r->confidence == Confidence::Medium);

  auto tf = eval(EnableTf32Rule(), a);
  REQUIRE(tf);
  checkContract(*tf);
  CHECK(tf->expected_saving_ratio == Approx(0.5 * (1 - 67.0 / 495.0)));
  CHECK(tf->action.find("torch.backends.cuda.matmul.allow_tf32 = True") != std::string::npos);
}

TEST_CASE("enable_mixed_precision: a V100 gets FP16 with a gradient scaler and no TF32") {
  auto a = healthyJob("Tesla V100-DGXS-32GB", 34'000'000'000ull);
  a.precision.fp32_matmul_ns = 3 * kSec;
  auto r = eval(EnableMixedPrecisionRule(), a);
  REQUIRE(r);
  checkContract(*r);
  CHECK(r->parameters["autocast_dtype"] == "float16");
  CHECK(r->parameters["grad_scaler"] == true);
  CHECK(r->action.find("GradScaler") != std::string::npos);
  CHECK(ev(*r, "fp32_to_tensor_speedup") == Approx(125.0 / 15.7));
  CHECK_FALSE(eval(EnableTf32Rule(), a));
}

TEST_CASE("enable_mixed_precision: TF32 time counts; BF16 jobs and small shares do not fire") {
  auto a = healthyJob("NVIDIA A100-SXM4-80GB");
  a.precision.ns[size_t(Precision::Tf32)] = 4 * kSec;
  auto r = eval(EnableMixedPrecisionRule(), a);
  REQUIRE(r);
  CHECK(r->expected_saving_ratio == Approx(0.4 * (1 - 156.0 / 312.0)));
  CHECK_FALSE(eval(EnableTf32Rule(), a)); // already TF32

  auto b = healthyJob(); // all BF16
  CHECK_FALSE(eval(EnableMixedPrecisionRule(), b));
  Thresholds t;
  b.precision.fp32_matmul_ns = model::TimeNs(t.precision.min_share * 10 * kSec) - 1000;
  CHECK_FALSE(eval(EnableMixedPrecisionRule(), b));
  b.precision.fp32_matmul_ns += 1000;
  CHECK(eval(EnableMixedPrecisionRule(), b));

  auto c = healthyJob("Some Future Accelerator");
  c.precision.fp32_matmul_ns = 5 * kSec;
  c.collection.gpus[0].info.compute_major = 0; // nothing to look the GPU up by
  CHECK_FALSE(eval(EnableMixedPrecisionRule(), c));
}

TEST_CASE("use_cuda_graphs: short kernels with the GPU idle between launches") {
  auto a = healthyJob();
  a.timeline.short_kernels = 9'000; // 90% under 10 us
  idle(a, IdleCause::LaunchOverhead, 3 * kSec);
  idle(a, IdleCause::HostBound, 3 * kSec);
  auto r = eval(UseCudaGraphsRule(), a);
  REQUIRE(r);
  checkContract(*r);
  // 3 s of launch-overhead idle less 10000 kernels x 1 us a graph still costs; the 3 s of
  // host-bound idle (Python, allocations) stays with graphs.
  CHECK(ev(*r, "saving_seconds") == Approx(3.0 - 0.01));
  CHECK(r->expected_saving_ratio == Approx(0.299));
  CHECK(r->explains.part == "idle.launch_overhead");
  CHECK(r->expected_saving_ratio <= r->explains.share());
  CHECK(r->parameters["torch_compile_mode"] == "reduce-overhead");
  CHECK(r->title.find("CUDA graph") != std::string::npos);

  SECTION("host-bound idle alone is not launch overhead: no graphs") {
    auto b = healthyJob();
    b.timeline.short_kernels = 9'000;
    idle(b, IdleCause::HostBound, 9 * kSec); // the MI300X normalization test: ms gaps in Python
    CHECK_FALSE(eval(UseCudaGraphsRule(), b));
  }
  SECTION("an AMD GPU is told about HIP graphs, in ROCm's words") {
    auto b = healthyJob("AMD Instinct MI300X", 206'000'000'000ull);
    b.timeline.short_kernels = 9'000;
    idle(b, IdleCause::LaunchOverhead, 5 * kSec);
    auto h = eval(UseCudaGraphsRule(), b);
    REQUIRE(h);
    checkContract(*h);
    CHECK(h->title.find("HIP graph") != std::string::npos);
    CHECK(h->title.find("CUDA") == std::string::npos);
    CHECK(h->action.find("hipGraph") != std::string::npos);
    CHECK(h->parameters["platform"] == "rocm");
    auto c = healthyJob(); // an NVIDIA name, but the host called hip* APIs
    c.collection.hip_api = true;
    CHECK(platformOf(c) == Platform::Rocm);
  }

  SECTION("long kernels: not launch-bound") {
    a.timeline.short_kernels = 6'000;
    CHECK_FALSE(eval(UseCudaGraphsRule(), a));
  }
  SECTION("edge: launch idle just under the threshold") {
    auto b = healthyJob();
    b.timeline.short_kernels = 9'000;
    idle(b, IdleCause::LaunchOverhead, 3 * kSec - 1000);
    CHECK_FALSE(eval(UseCudaGraphsRule(), b));
    idle(b, IdleCause::LaunchOverhead, 1000);
    CHECK(eval(UseCudaGraphsRule(), b));
  }
}

TEST_CASE("reduce_host_syncs counts the GPU idle the syncs cause, not the host's wait") {
  SECTION("GPU-bound: the host waits 50% in syncs, nothing to recover") {
    auto a = healthyJob();
    a.syncs.blocked_ns = 5 * kSec;
    CHECK_FALSE(eval(ReduceHostSyncsRule(), a));
  }
  SECTION("the GPU drains at every sync") {
    auto a = healthyJob();
    idle(a, IdleCause::Sync, 6 * kSec); // busy 4 s
    a.syncs.calls = 20'000;
    a.syncs.blocked_ns = 9 * kSec; // host's own time 1 s
    auto r = eval(ReduceHostSyncsRule(), a);
    REQUIRE(r);
    checkContract(*r);
    // 20000 syncs x 0.5 ms cover all 6 s of sync idle.
    CHECK(ev(*r, "recoverable_idle_seconds") == Approx(6.0));
    CHECK(r->expected_saving_ratio == Approx(0.6));
  }
  SECTION("the idle is the host's own time (a sleep after the sync): it stays") {
    auto a = healthyJob();
    idle(a, IdleCause::Sync, 9 * kSec);             // busy 1 s
    a.syncs.blocked_ns = model::TimeNs(1.1 * kSec); // host's own 8.9 s
    CHECK_FALSE(eval(ReduceHostSyncsRule(), a));    // 10 - 8.9 = 1.1 s < 20%
  }
  SECTION("each sync costs at most the drain-to-relaunch latency") {
    auto a = healthyJob();
    idle(a, IdleCause::Sync, 6 * kSec); // busy 4 s
    a.syncs.calls = 1000;               // 6 ms per sync: the host's own work after each one stays
    a.syncs.blocked_ns = 4 * kSec;      // no longer than the GPU's work: no idle inside the syncs
    Thresholds t;
    t.host_syncs.max_cost_per_sync_ns = 2'500'000; // 2.5 s in all
    auto r = eval(ReduceHostSyncsRule(), a, t);
    REQUIRE(r);
    CHECK(ev(*r, "recoverable_idle_seconds") == Approx(2.5));
    CHECK(ev(*r, "idle_inside_syncs_lower_bound_seconds") == Approx(0.0));
    CHECK_FALSE(eval(ReduceHostSyncsRule(), a)); // 0.5 ms x 1000 = 5% < 20%
  }
  SECTION("GPU idle while the host is still inside the syncs is recovered in full") {
    // A loaded host wakes up late from each sync: 20000 syncs blocked 9.5 s, GPU busy 0.2 s, so
    // at least 9.3 s of the sync idle passed with the host still waiting; the cap (20000 x 0.5 ms
    // = 10%) alone would miss it.
    auto a = healthyJob();
    idle(a, IdleCause::Sync, model::TimeNs(9.8 * kSec)); // busy 0.2 s
    a.syncs.calls = 20'000;
    a.syncs.blocked_ns = model::TimeNs(9.5 * kSec);
    Thresholds t;
    t.host_syncs.max_cost_per_sync_ns = 5'000; // 0.1 s in all
    auto r = eval(ReduceHostSyncsRule(), a, t);
    REQUIRE(r);
    checkContract(*r);
    CHECK(ev(*r, "idle_inside_syncs_lower_bound_seconds") == Approx(9.3));
    CHECK(ev(*r, "recoverable_idle_seconds") == Approx(9.4));
    CHECK(r->expected_saving_ratio == Approx(0.94));
  }
}

TEST_CASE("increase_batch_size: under-filled GPU, multiplier from the memory model") {
  auto a = healthyJob();
  a.kernels.occupancy.sm_fill_ns = 0.2 * 10 * kSec;
  trainingLoop(a, StepSource::ProfilerStep);
  // 8 GB peak of 80 GB, nothing persistent known: (72 GB) / 8 GB = 9 -> capped at 4.
  auto r = eval(IncreaseBatchSizeRule(), a);
  REQUIRE(r);
  checkContract(*r);
  CHECK(r->parameters["batch_size_multiplier"] == 4.0);
  CHECK(r->evidence["memory_model"] == "all_of_peak_grows");
  // Fully busy: a step takes T - B + B x max(1, 4 x 0.2) = T; per sample 1/4 of the time.
  CHECK(r->expected_saving_ratio == Approx(0.75));
  CHECK(r->action.find("learning rate") != std::string::npos);

  SECTION("persistent vs growing memory from the allocation series") {
    MemorySeries s;
    s.pid = 1;
    s.allocated.assign(20, 30'000'000'000); // 30 GB persists
    s.allocated[15] = 50'000'000'000;       // peak 50 GB: 20 GB grows with the batch
    a.memory.devices[0].peak_bytes = 50'000'000'000;
    a.utilization.memory.push_back(s);
    auto m = eval(IncreaseBatchSizeRule(), a);
    REQUIRE(m);
    // (72 - 30) / 20 = 2.1 -> 2.0 (half steps)
    CHECK(m->parameters["batch_size_multiplier"] == 2.0);
    CHECK(ev(*m, "persistent_memory_bytes") == Approx(30e9));
  }
  SECTION("never when memory is near full") {
    a.memory.devices[0].peak_bytes = 40'000'000'000; // 72 / 40 = 1.8 < 2
    CHECK_FALSE(eval(IncreaseBatchSizeRule(), a));
  }
  SECTION("a filled GPU does not fire") {
    a.kernels.occupancy.sm_fill_ns = 0.5 * 10 * kSec;
    CHECK_FALSE(eval(IncreaseBatchSizeRule(), a));
  }
}

TEST_CASE("reduce_memory_pressure: near the device limit, or fragmented") {
  auto a = healthyJob();
  a.memory.devices[0].peak_bytes = 76'000'000'000; // 95%
  auto r = eval(ReduceMemoryPressureRule(), a);
  REQUIRE(r);
  checkContract(*r);
  CHECK(ev(*r, "peak_memory_ratio") == Approx(0.95));
  CHECK(r->action.find("expandable_segments") != std::string::npos);
  CHECK(r->action.find("checkpoint") != std::string::npos);

  SECTION("edge: just under the threshold") {
    a.memory.devices[0].peak_bytes = 71'999'000'000;
    CHECK_FALSE(eval(ReduceMemoryPressureRule(), a));
  }
  SECTION("fragmentation: reserved 70 GB, allocated 49 GB") {
    a.memory.devices[0].peak_bytes = 70'000'000'000; // 87.5%: under the near-full line
    MemorySeries s;
    s.pid = 1;
    s.reserved = {70'000'000'000};
    s.allocated = {49'000'000'000};
    a.utilization.memory.push_back(s);
    auto f = eval(ReduceMemoryPressureRule(), a);
    REQUIRE(f);
    checkContract(*f);
    CHECK(ev(*f, "fragmentation") == Approx(0.3));
  }
  SECTION("it supersedes increase_batch_size") {
    std::vector<Recommendation> recs(2);
    recs[0].id = "increase_batch_size";
    recs[1].id = "reduce_memory_pressure";
    resolveConflicts(recs);
    REQUIRE(recs.size() == 1);
    CHECK(recs[0].id == "reduce_memory_pressure");
  }
}

TEST_CASE("right_size_mig: the smallest slice with 20% memory headroom covering the SM demand") {
  auto a = healthyJob("NVIDIA H100 80GB HBM3");
  idle(a, IdleCause::Sync, 9.5 * kSec); // busy 5%, 9.5 ms gaps
  a.syncs.blocked_ns = kSec / 2;        // the host waits for its bursts, then sleeps
  a.kernels.occupancy.sm_fill_ns = 1.0 * 10 * kSec;
  a.memory.devices[0].peak_bytes = 9'000'000'000; // 9 GB / 0.8 = 11.25 GB: not 1g.10gb
  auto r = eval(RightSizeMigRule(), a);
  REQUIRE(r);
  checkContract(*r);
  CHECK(r->parameters["mig_profile"] == "1g.20gb");
  CHECK(r->parameters["kubernetes_resource"] == "nvidia.com/mig-1g.20gb");
  CHECK(r->action.find("nvidia.com/mig-1g.20gb: 1") != std::string::npos);
  // Filled kernels run 7x longer on 1/7 of the SMs: 0.05 x 6 = 30% slower.
  CHECK(ev(*r, "predicted_slowdown") == Approx(0.3));
  CHECK(r->expected_saving_ratio == Approx(1 - (1.0 / 7) * 1.3));

  SECTION("compute too small in the memory-fitting slice: a larger one, and the text says so") {
    auto b = healthyJob("NVIDIA A100-SXM4-40GB", 40'000'000'000ull);
    idle(b, IdleCause::Sync, 8 * kSec); // busy 20%: 1/7 of the SMs is 14%
    b.memory.devices[0].peak_bytes = 2'000'000'000;
    auto m = eval(RightSizeMigRule(), b);
    REQUIRE(m);
    checkContract(*m);
    CHECK(m->parameters["mig_profile"] == "2g.10gb");
    CHECK(m->evidence["memory_only_profile"] == "1g.5gb");
    CHECK(m->action.find("memory alone would fit 1g.5gb") != std::string::npos);
  }
  SECTION(
      "a busy job, a GPU without MIG, or a job already on the smallest slice that fits: nothing") {
    CHECK_FALSE(eval(RightSizeMigRule(), healthyJob()));
    auto v = a;
    v.collection.gpus[0].info.name = "Tesla V100-DGXS-32GB";
    CHECK_FALSE(eval(RightSizeMigRule(), v));
    auto m = a;
    m.collection.gpus[0].info.mig_profile = "1g.20gb";
    m.collection.gpus[0].info.memory_total_bytes = 20'000'000'000ull;
    CHECK_FALSE(eval(RightSizeMigRule(), m));
    m.collection.gpus[0].info.mig_profile = "9g.999gb"; // not in the GPU's table
    CHECK_FALSE(eval(RightSizeMigRule(), m));
  }
  SECTION("on a larger slice: a smaller slice, relative to the one it runs on") {
    auto m = a;
    // NVML says 3g.40gb; the slice reports its own memory (40 GB), busy and fill are the slice's.
    m.collection.gpus[0].info.mig_profile = "3g.40gb";
    m.collection.gpus[0].info.memory_total_bytes = 40'000'000'000ull;
    auto r3 = eval(RightSizeMigRule(), m);
    REQUIRE(r3);
    checkContract(*r3);
    CHECK(r3->parameters["mig_profile"] == "1g.20gb");
    CHECK(r3->evidence["current_mig_profile"] == "3g.40gb");
    CHECK(ev(*r3, "profile_compute_share") == Approx(1.0 / 3));
    // Filled kernels run 3x longer on 1 of 3 slices: 0.05 x 2 = 10% slower.
    CHECK(ev(*r3, "predicted_slowdown") == Approx(0.1));
    CHECK(r3->expected_saving_ratio == Approx(1 - (1.0 / 3) * 1.1));
    CHECK(r3->title.find("from MIG 3g.40gb to MIG 1g.20gb") != std::string::npos);
    CHECK(r3->action.find("the 3g.40gb slice of a H100-80GB") != std::string::npos);
    // A "+me" variant is its base profile.
    m.collection.gpus[0].info.mig_profile = "3g.40gb+me";
    auto me = eval(RightSizeMigRule(), m);
    REQUIRE(me);
    CHECK(me->parameters["mig_profile"] == "1g.20gb");
  }
  SECTION("it supersedes share_gpu") {
    CHECK(eval(ShareGpuRule(), a)); // would fire alone
    auto recs = evaluateRules(defaultRules(), RuleContext{a, nullptr, Thresholds{}});
    REQUIRE(recs.size() == 1);
    CHECK(recs[0].id == "right_size_mig");
  }
}

TEST_CASE("share_gpu: low use in bursts, replicas from busy share and memory") {
  auto a = healthyJob("Tesla V100-DGXS-32GB", 34'000'000'000ull); // no MIG
  idle(a, IdleCause::Sync, 8.5 * kSec, 850);                      // busy 15%, 10 ms gaps
  auto r = eval(ShareGpuRule(), a);
  REQUIRE(r);
  checkContract(*r);
  CHECK(r->parameters["replicas"] == 6); // 0.9 / 0.15
  CHECK(r->expected_saving_ratio == Approx(1 - 1.0 / 6));
  CHECK(r->action.find("replicas: 6") != std::string::npos);

  SECTION("memory caps the replicas") {
    a.memory.devices[0].peak_bytes = 10'000'000'000; // 0.9 x 34 / 10 = 3.06
    CHECK(eval(ShareGpuRule(), a)->parameters["replicas"] == 3);
  }
  SECTION("microsecond gaps (launch-bound) are not bursts") {
    auto b = healthyJob("Tesla V100-DGXS-32GB", 34'000'000'000ull);
    idle(b, IdleCause::HostBound, 8.5 * kSec, 1'000'000);
    CHECK_FALSE(eval(ShareGpuRule(), b));
  }
  SECTION("a fix for the idle GPU comes first") {
    std::vector<Recommendation> recs(2);
    recs[0].id = "share_gpu";
    recs[1].id = "prefetch_input";
    resolveConflicts(recs);
    REQUIRE(recs.size() == 1);
    CHECK(recs[0].id == "prefetch_input");
  }
}

TEST_CASE("gpu tables: throughput and MIG profiles by GPU name") {
  CHECK(std::string(mathThroughputFor("Tesla V100-SXM2-16GB", 7, 0).model) == "V100");
  CHECK(std::string(mathThroughputFor("NVIDIA A10", 8, 6).model) == "A10");
  CHECK(std::string(mathThroughputFor("NVIDIA A100-SXM4-40GB", 8, 0).model) == "A100");
  CHECK(std::string(mathThroughputFor("NVIDIA L40S", 8, 9).model) == "L40S");
  CHECK(std::string(mathThroughputFor("NVIDIA GB200", 10, 0).model) == "GB200");
  auto unknown = mathThroughputFor("Mystery GPU", 9, 0);
  CHECK(std::string(unknown.model) == "H100");
  CHECK_FALSE(unknown.known);
  CHECK(std::string(migGpuFor("NVIDIA A100-SXM4-80GB", 85'000'000'000).model) == "A100-80GB");
  CHECK(std::string(migGpuFor("NVIDIA A100-PCIE-40GB", 42'000'000'000).model) == "A100-40GB");
  CHECK(std::string(migGpuFor("NVIDIA H100 NVL", 100'000'000'000).model) == "H100-94GB");
  CHECK(std::string(migGpuFor("NVIDIA H200", 150'000'000'000).model) == "H200-141GB");
  CHECK(std::string(migGpuFor("NVIDIA B200", 190'000'000'000).model) == "B200-180GB");
  CHECK(migGpuFor("NVIDIA A30", 24'000'000'000).profiles.size() == 3);
  CHECK_FALSE(migGpuFor("Tesla V100-DGXS-32GB", 34'000'000'000).known());
  for (const char* g : {"NVIDIA A100-SXM4-40GB", "NVIDIA A100-SXM4-80GB", "NVIDIA A30",
                        "NVIDIA H100 80GB HBM3", "NVIDIA H100 NVL", "NVIDIA H200", "NVIDIA B200"}) {
    auto m = migGpuFor(g, 0);
    REQUIRE(m.known());
    // Smallest first, the last one the whole GPU.
    for (size_t i = 1; i < m.profiles.size(); ++i)
      CHECK(m.profiles[i].compute_slices >= m.profiles[i - 1].compute_slices);
    CHECK(m.profiles.back().compute_slices == m.compute_slices);
  }
}

TEST_CASE("ranking: by expected saving, ties by confidence then id") {
  auto a = healthyJob();
  a.precision.fp32_matmul_ns = 5 * kSec; // mixed precision ~0.47, TF32 ~0.43
  idle(a, IdleCause::Input, 2 * kSec);   // prefetch 0.2
  a.timeline.idle.input_data_loader_ns = 2 * kSec;
  auto recs = evaluateRules(defaultRules(), RuleContext{a, nullptr, Thresholds{}});
  // TF32 is an alternative to mixed precision: one recommendation with options.
  REQUIRE(recs.size() == 2);
  CHECK(recs[0].id == "enable_mixed_precision");
  CHECK(recs[1].id == "prefetch_input");
  for (const auto& r : recs)
    checkContract(r);
  const auto& alt = recs[0].parameters["alternatives"];
  REQUIRE(alt.size() == 1);
  CHECK(alt[0]["id"] == "enable_tf32");
  CHECK(alt[0]["expected_saving_ratio"].get<double>() == Approx(0.5 * (1 - 67.0 / 495.0)));
  CHECK(recs[0].action.find("allow_tf32 = True") != std::string::npos);
}

TEST_CASE("advice floor: findings under it are notes, risks stay recommendations") {
  auto a = healthyJob();
  a.precision.fp32_matmul_ns = kSec; // 10% of busy: mixed precision saves ~9% of the span
  auto advice = advise(a, nullptr);
  REQUIRE(advice.recommendations.size() == 1);
  CHECK(advice.recommendations[0].id == "enable_mixed_precision");
  Thresholds high;
  high.advice_floor = 0.5;
  auto quiet = advise(a, nullptr, high);
  CHECK(quiet.recommendations.empty());
  REQUIRE(quiet.notes.size() == 1);
  CHECK(quiet.notes[0].id == "enable_mixed_precision");
  // A risk is not time: reduce_memory_pressure saves 0 and stays a recommendation.
  a.memory.devices[0].peak_bytes = 79'000'000'000ull;
  auto risky = advise(a, nullptr, high);
  REQUIRE(risky.recommendations.size() == 1);
  CHECK(risky.recommendations[0].id == "reduce_memory_pressure");
}

namespace {
// A rule that claims more than the part it explains accounts for.
struct OverclaimingRule final : Rule {
  std::string_view id() const override { return "use_cuda_graphs"; }
  std::optional<Recommendation> evaluate(const RuleContext& ctx) const override {
    Recommendation r;
    r.id = "use_cuda_graphs";
    r.expected_saving_ratio = 0.9;
    r.evidence["expected_saving_ratio"] = 0.9;
    r.explains = idleExplains(ctx.analysis, IdleCause::LaunchOverhead);
    return r;
  }
};
} // namespace

TEST_CASE("consistency by construction: a saving is bounded by the part it explains") {
  auto a = healthyJob();
  idle(a, IdleCause::LaunchOverhead, kSec / 10000); // 100 us of 10 s
  idle(a, IdleCause::HostBound, 9 * kSec);
  std::vector<std::unique_ptr<Rule>> rules;
  rules.push_back(std::make_unique<OverclaimingRule>());
  auto recs = evaluateRules(rules, RuleContext{a, nullptr, Thresholds{}});
  REQUIRE(recs.size() == 1);
  CHECK(recs[0].expected_saving_ratio == Approx(1e-5));
  CHECK(recs[0].evidence["expected_saving_ratio"].get<double>() == Approx(1e-5));
  CHECK(splitByFloor(recs, 0.02).recommendations.empty());
}

TEST_CASE("increase_batch_size outside a training loop: the under-filled launch itself") {
  auto a = healthyJob("NVIDIA A100-SXM4-40GB", 40'000'000'000ull);
  a.collection.gpus[0].info.sm_count = 108;
  a.memory.devices.clear(); // the MPI saxpy export: no memory figures, no steps
  a.timeline.busy_ns = a.timeline.kernel_busy_ns = kSec;
  a.timeline.idle.ns[size_t(IdleCause::Other)] = 9 * kSec;
  KernelStats k;
  k.name = k.display_name = "saxpy(int, float, float*, float*)";
  k.count = k.timed_count = 5;
  k.total_ns = kSec;
  LaunchConfig cfg;
  cfg.grid = {2, 1, 1};
  cfg.block = {256, 1, 1};
  cfg.count = 5;
  k.configs.push_back(cfg);
  k.occupancy.timed_ns = k.occupancy.fill_timed_ns = kSec;
  k.occupancy.sm_fill_ns = 0.005 * double(kSec);
  k.occupancy.active_blocks_ns = 8.0 * double(kSec); // 8 blocks of 256 fit on an SM
  a.kernels.by_name = {k};
  a.kernels.occupancy = k.occupancy;
  auto r = eval(IncreaseBatchSizeRule(), a);
  REQUIRE(r);
  checkContract(*r);
  CHECK(r->id == "increase_batch_size");
  const auto& lc = r->parameters["launch_config"];
  CHECK(lc["kernel"] == "saxpy");
  CHECK(lc["grid"][0] == 2);
  CHECK(lc["suggested_grid_blocks"] == 8 * 108);
  CHECK(r->title.find("108-SM") != std::string::npos);
  CHECK(r->title.find("batch") == std::string::npos);
  CHECK(r->expected_saving_ratio == Approx(0.1 * 0.995));
  CHECK(r->expected_saving_ratio <= r->explains.share());
  // And no DataLoader advice for its inferred input.
  a.timeline.idle.ns[size_t(IdleCause::Input)] = 6 * kSec;
  CHECK_FALSE(eval(PrefetchInputRule(), a));
}

TEST_CASE("precision rules: a trace without device properties is placed by its kernel names") {
  auto a = healthyJob("", 0);
  a.collection.gpus[0].info.compute_major = 0;
  a.precision.fp32_matmul_ns = 5 * kSec;
  CHECK_FALSE(eval(EnableMixedPrecisionRule(), a)); // nothing says which GPU
  KernelStats k;
  k.name = k.display_name = "volta_sgemm_128x64_nn";
  a.kernels.by_name.push_back(k);
  auto r = eval(EnableMixedPrecisionRule(), a);
  REQUIRE(r);
  checkContract(*r);
  CHECK(r->parameters["autocast_dtype"] == "float16");
  CHECK(r->confidence == Confidence::Low);
}
