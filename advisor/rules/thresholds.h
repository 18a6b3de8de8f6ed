// Every threshold the rules use, in one place, with why it has the value it has. A rule reads its
// own block; tests and (later) configuration override them by value.
//
// Margins: the simulated device's timings follow the host's CPU, so on a loaded machine a healthy
// job launches late and idles a little more, and a planted inefficiency may look smaller or
// larger. Each threshold sits well between what the healthy sample (and the real traces that must
// stay quiet) measure and what the sample planted for that rule measures; tests/e2e/
// recommendations_test.cpp prints both for every run.
#pragma once

#include "advisor/gpu/gpu_type_choice.h"

#include <cstdint>

namespace gpuwise::advisor {

struct Thresholds {
  struct PinnedMemory {
    // Pageable H2D/D2H copy time as a share of the reference time (step time when steps are
    // known, else the GPU span, else the wall time) at which pinning is worth recommending:
    // below ~5% the change is rarely worth a code change.
    double min_share = 0.05;
    // Total pageable bytes below which the rule stays quiet: a few small copies (a scalar
    // .item(), a tiny config tensor) are latency, not bandwidth, and pinning does not help them.
    uint64_t min_bytes = 16ull << 20;
    // Pinned copies (with GPU timing) the trace needs, per direction, before its own pinned
    // bandwidth is trusted over the per-GPU table: enough bytes that launch latency does not
    // dominate, and more than a single copy.
    uint64_t min_measured_pinned_bytes = 8ull << 20;
    uint64_t min_measured_pinned_copies = 2;
  };
  PinnedMemory pinned_memory;

  struct PrefetchInput {
    // Input stall ratio (summary.input_stall_ratio) at which prefetching is recommended. The
    // ResNet-50 traces measure 0.34 with num_workers=0 and 0.06-0.07 with num_workers=4 (a
    // healthy loader still waits a little at the first batch of each step); the input_stall
    // sample ~0.7, the healthy one ~0: 0.15 is a factor two from both sides.
    double min_ratio = 0.15;
    // Bounds on the suggested num_workers: two keeps one batch in flight while another is
    // prepared; beyond 16 workers a host rarely has the cores, and the loader is not the fix.
    uint32_t min_workers = 2;
    uint32_t max_workers = 16;
    // Input stall inferred from host state (no DataLoader range measured it) is a data-loader
    // problem only inside a training loop: steps from ProfilerStep/NVTX ranges, or at least this
    // many inferred repetitions. The MPI saxpy export repeats its copy-kernel-copy sequence 5
    // times (a program's phases, not a loader); the input_stall sample runs 60 steps.
    uint64_t min_inferred_steps = 10;
    // A loader that is too slow stalls most steps; a stall that a few steps hold (the host busy
    // elsewhere for a moment, one slow read) is not a loader to tune, and more workers would not
    // have helped. Prefetching is advised only when at least this share of the steady steps each
    // waited for input `stalled_step_min_ratio` of their own time. The ResNet-50 num_workers=0
    // traces and the input_stall sample stall in every step (share 1.0); the healthy sample on a
    // host loaded past its cores has put all of a 0.21 ratio in 3 to 6 of 54 steps (share
    // <= 0.11): a quarter sits between.
    double min_stalled_step_share = 0.25;
    double stalled_step_min_ratio = 0.05;
  };
  PrefetchInput prefetch_input;

  struct Precision {
    // FP32 GEMM/convolution time (or TF32 time, for mixed precision) as a share of GPU busy time
    // before a precision change is worth recommending: a code change (autocast, a scaler) for
    // under 10% of the GPU's work rarely pays. ResNet-50 FP32 on V100 measures 0.5-0.57 (all eight
    // files); BF16 jobs 0; the input_stall sample ~0.99 (its kernels are FP32 GEMMs).
    double min_share = 0.10;
  };
  Precision precision;

  struct CudaGraphs {
    // Share of timed kernels shorter than kShortKernelNs (10 us): a launch-bound job is mostly
    // kernels that finish before the next launch arrives. launch_bound: 1.0, BERT-small and
    // Falconsai inference (tracelens/h100) 0.97 and 0.75; ResNet-50 0.53-0.63, whose idle under
    // the autograd profiler is the profiler's own host overhead.
    double min_short_kernel_share = 0.7;
    // Launch-overhead idle (idle_attribution.h: the launch travelling, or the host doing nothing
    // but launching in short gaps) as a share of the GPU span. launch_bound measures ~0.9;
    // ResNet-50 under 0.05, whose host time is mostly Python the graphs would not remove; the
    // MI300X normalization test ~0 (ms-long gaps in Python, module loads, allocations): 0.3.
    double min_launch_idle_share = 0.30;
    // What a kernel node of a replayed graph still costs between kernels (graph launches run
    // back to back with about 1 us between nodes): subtracted per kernel from the saving.
    int64_t graph_gap_per_kernel_ns = 1'000;
  };
  CudaGraphs cuda_graphs;

  struct BatchSize {
    // Kernel-time weighted SM fill (share of the SMs a kernel's grid covers) below which the GPU
    // is under-filled: half the SMs idle while kernels run. Every sample but launch_bound
    // measures > 0.9, ResNet-50 0.9.
    double max_sm_fill = 0.5;
    // Memory kept free after scaling: the batch multiplier is capped so the predicted peak stays
    // within (1 - headroom) of the device's memory (fragmentation, allocator rounding).
    double memory_headroom = 0.10;
    // The smallest multiplier worth suggesting, and the largest (beyond 4x the learning-rate
    // schedule usually needs retuning, not just linear scaling).
    double min_multiplier = 2.0;
    double max_multiplier = 4.0;
  };
  BatchSize batch_size;

  struct MemoryPressure {
    // Peak reserved (or allocated) memory as a share of the device at which the job is "near
    // full": the caching allocator starts freeing and retrying (cudaFree + synchronize) and one
    // larger batch or sequence fails with OOM.
    double min_peak_ratio = 0.90;
    // Fragmentation: reserved memory the allocator holds but has not handed out, as a share of
    // reserved, while reserved is above min_fragmented_reserved_ratio of the device.
    double min_fragmentation = 0.20;
    double min_fragmented_reserved_ratio = 0.80;
  };
  MemoryPressure memory_pressure;

  struct HostSyncs {
    // GPU idle that removing the syncs would recover, as a share of the GPU span: host_sync
    // measures 0.54 on an idle host, 0.98 under six CPU hogs; small_footprint ~0.05 (120 syncs x
    // 0.5 ms: its idle is a host sleep, which stays); healthy < 0.01 (20 lagged event syncs).
    double min_saving = 0.20;
    // What one sync can cost the GPU: the drain-to-relaunch latency (the sync returning, the next
    // launch arriving), tens of microseconds on a real GPU; 0.5 ms leaves room for a loaded host.
    // A longer gap after a sync returns is the host's own work (a sleep, Python), which stays
    // without the sync: small_footprint's 8 ms sleeps after each sync would otherwise count. (Idle
    // while the host is still inside the sync is not capped: on a loaded host, host_sync's syncs
    // take 1.3-4 ms each to wake up, 20000 x 0.5 ms was 12% of an 84 s span and the rule missed.)
    int64_t max_cost_per_sync_ns = 500'000;
  };
  HostSyncs host_syncs;

  struct Mig {
    // Memory kept free inside the slice: the peak must fit in (1 - headroom) of the profile.
    double memory_headroom = 0.20;
    // SM demand (GPU busy share x SM fill) above which the job is not a small-slice candidate:
    // a job using more than 30% of the SMs over time needs most of a GPU in its bursts.
    double max_demand = 0.30;
    // Predicted slowdown (kernels that filled more SMs than the slice has run longer) above
    // which the next larger profile is taken.
    double max_slowdown = 0.50;
  };
  Mig mig;

  struct ShareGpu {
    // GPU busy share below which one job leaves most of the GPU unused.
    double max_busy = 0.30;
    // Mean idle gap (idle time / gaps) above which the use is "in bursts": the GPU sits idle for
    // whole milliseconds, long enough for another process's work; launch-bound jobs idle in
    // microsecond gaps that time-slicing cannot fill.
    int64_t min_mean_idle_gap_ns = 1'000'000;
    // Combined busy share the replicas may reach, and the most replicas suggested.
    double target_busy = 0.90;
    uint32_t max_replicas = 8;
  };
  ShareGpu share_gpu;

  struct Straggler {
    // The other ranks' median collective wait per step, as a share of the median step p50, at
    // which the rank they wait for is a straggler (analysis/straggler.h): below a tenth of a
    // step the wait is jitter.
    double min_others_wait_share = 0.10;
    // The straggler's own wait per step at most this share of the others' median: in a balanced
    // job every rank is sometimes last and waits about as much as the others. The planted
    // stragglers of tests/pytorch/distributed_jobs.h wait 0; beside a CPU hog, where one rank's
    // loader or launches are descheduled now and then, the balanced jobs' least-waiting rank
    // measured 0.34 (no_overlap) and 0.78 (healthy) of the others' median.
    double max_own_wait_ratio = 0.15;
    // Without collectives: a step p50 this much above the median of the other ranks' (the
    // Prometheus straggler alert's 1.2 as well).
    double min_step_ratio = 1.2;
  };
  Straggler straggler;

  struct OverlapCommunication {
    // Communication no compute kernel hid and that was not a wait for a late rank (that is
    // fix_straggler's), as a share of step time, at which overlapping it is advised.
    double min_exposed_share = 0.10;
    // Overlap ratio (hidden / communication) above which overlap is already good: the change is
    // then fewer synchronisations, when communication still takes min_communication_share of the
    // step.
    double good_overlap_ratio = 0.8;
    double min_communication_share = 0.5;
  };
  OverlapCommunication overlap_communication;

  // right_size_gpu_type: the slowdown the user accepts, the memory headroom, the prices
  // (advisor/gpu/gpu_type_choice.h says why each default is what it is).
  GpuTypeOptions gpu_type;

  // Findings whose expected saving is below this share of step (or GPU) time are notes, not
  // recommendations: under 2% a code change rarely repays the engineer's time, and the estimate's
  // own error is of that order. `--advice-floor` overrides it.
  double advice_floor = 0.02;
};

} // namespace gpuwise::advisor
