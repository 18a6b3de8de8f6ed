// Theoretical occupancy against the occupancy figures real Kineto traces carry.
//
// Kineto records, per kernel, "blocks per SM" (grid blocks / SMs) and "est. achieved occupancy %",
// which it computes as min(blocks per SM, resident blocks per SM from cuda_occupancy.h) x threads
// per block / max threads per SM, rounded to a whole percent. So for every kernel:
//   - our theoretical occupancy is at least the estimate (a resident limit bounds both), and
//   - recomputing Kineto's estimate from our resident-block count gives the trace's number,
// except where Kineto asked the calculator without the kernel's shared-memory opt-in: it then sees
// more than 48 KiB per block as impossible and records 0, while the kernel did run.
#include "advisor/occupancy/occupancy.h"
#include "tests/advisor/precision/kineto_kernels.h"
#include "tests/traces_dir.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>

using namespace gpuwise::profiler;
using gpuwise::test::KinetoCorpus;

TEST_CASE("theoretical occupancy agrees with the estimates recorded in real traces") {
  KinetoCorpus corpus = gpuwise::test::loadKinetoCorpus(gpuwise::test::kinetoTracesDir());
  REQUIRE_FALSE(corpus.traces.empty());

  size_t checked = 0, matched = 0, kineto_optin_zero = 0, non_nvidia = 0;
  size_t traces_checked = 0;
  std::ostringstream mismatches;
  size_t mismatch_count = 0;
  double sum_theoretical = 0, sum_estimate = 0;

  for (const auto& trace : corpus.traces) {
    bool any = false;
    for (const auto& k : trace.kernels) {
      if (k.est_achieved_occupancy_pct < 0 || k.registers_per_thread < 0 || k.shared_memory < 0) {
        continue;
      }
      const auto* props = trace.deviceProperties(k.device);
      if (props == nullptr || props->num_sms == 0) continue;
      DeviceLimits limits = resolveDeviceLimits(gpuwise::test::toDeviceInfo(*props));
      if (!limits.valid()) {
        ++non_nvidia;
        continue;
      }
      uint32_t threads = k.block[0] * k.block[1] * k.block[2];
      uint64_t blocks = uint64_t{k.grid[0]} * k.grid[1] * k.grid[2];
      if (threads == 0 || blocks == 0) continue;

      LaunchShape shape{threads, uint32_t(k.registers_per_thread), 0, uint32_t(k.shared_memory)};
      Occupancy o = theoreticalOccupancy(shape, limits);
      INFO(trace.path << ": " << k.name.substr(0, 120));
      REQUIRE(o.valid);
      ++checked;
      any = true;

      // The trace's blocks per SM is the grid over the SM count we read.
      double blocks_per_sm = double(blocks) / props->num_sms;
      CHECK(k.blocks_per_sm == Approx(blocks_per_sm).epsilon(1e-4));

      double estimate = k.est_achieved_occupancy_pct / 100.0;
      CHECK(o.occupancy + 0.005 >= estimate);
      sum_theoretical += o.occupancy;
      sum_estimate += estimate;

      double expected = std::min(blocks_per_sm, double(o.active_blocks_per_sm)) * threads /
                        double(limits.max_threads_per_sm) * 100.0;
      if (std::abs(expected - k.est_achieved_occupancy_pct) <= 0.5 + 1e-6) {
        ++matched;
      } else if (k.est_achieved_occupancy_pct == 0 &&
                 uint64_t(k.shared_memory) + limits.reserved_shared_memory_per_block >
                     limits.shared_memory_per_block) {
        ++kineto_optin_zero;
      } else if (++mismatch_count <= 5) {
        mismatches << "\n  " << trace.path << " est " << k.est_achieved_occupancy_pct
                   << " expected " << expected << " threads " << threads << " regs "
                   << k.registers_per_thread << " smem " << k.shared_memory << " "
                   << k.name.substr(0, 80);
      }
    }
    if (any) ++traces_checked;
  }

  std::ostringstream summary;
  summary << checked << " kernels in " << traces_checked << " traces: " << matched
          << " reproduce Kineto's estimate, " << kineto_optin_zero
          << " are Kineto's >48 KiB zeros, " << mismatch_count << " differ; " << non_nvidia
          << " non-NVIDIA skipped; mean theoretical " << sum_theoretical / double(checked)
          << " vs estimate " << sum_estimate / double(checked) << mismatches.str();
  WARN(summary.str());

  if (gpuwise::test::haveFullTraces()) {
    // V100, A100, H100, B200 and GP100 traces carry these fields.
    CHECK(traces_checked >= 20);
    CHECK(checked >= 50000);
  } else {
    CHECK(traces_checked >= 3); // the subset in tests/data/traces: V100, A100 and H100 traces
  }
  CHECK(mismatch_count == 0);
  CHECK(matched + kineto_optin_zero == checked);
}
