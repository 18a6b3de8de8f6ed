// The ranks of a distributed job side by side: one RankSummary per rank (per process where the
// ranks are unknown), the figures `ranks[]` of the report carries and the per-pod report merge
// reads back, and the straggler the other ranks wait for.
//
// Plain values; any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpuwise::advisor {

struct RankSummary {
  int32_t rank = -1; // -1: a process without a rank
  std::string host;
  int64_t pid = 0;
  std::string gpu;     // the GPU's model name, empty when unknown
  uint32_t device = 0; // its CUDA ordinal in the process
  uint64_t steps = 0;  // steady steps (after the warm-up)
  std::optional<double> step_mean_seconds, step_p50_seconds;
  std::optional<double> gpu_busy_ratio;
  double compute_seconds = 0;               // union of compute kernels
  double communication_seconds = 0;         // union of collective kernels
  double communication_exposed_seconds = 0; // not overlapped by compute
  std::optional<double> communication_overlap_ratio;
  double collective_wait_seconds = 0; // its collectives' wait for the last rank to arrive
  std::optional<double> input_stall_ratio;
  double host_seconds = 0; // per steady step: host-bound idle (launch, sync, Python) x steps
};

// What makes the straggler slow: what it spends longer on than its peers for the same work.
enum class StragglerCause : uint8_t { Compute, Input, Host };
inline const char* toString(StragglerCause cause) {
  switch (cause) {
  case StragglerCause::Compute: return "compute";
  case StragglerCause::Input: return "input";
  case StragglerCause::Host: return "host";
  }
  return "compute";
}

struct StragglerFinding {
  int32_t rank = -1;
  StragglerCause cause = StragglerCause::Compute;
  double others_wait_seconds = 0;    // summed over the other ranks: the expected saving
  double step_p50_seconds = 0;       // the straggler's
  double peers_step_p50_seconds = 0; // the median of the other ranks'
};

struct DistributedResult {
  std::vector<RankSummary> ranks; // by rank; one entry for a single-rank job too
  std::optional<int32_t> world_size;
  std::vector<int32_t> missing_ranks; // of world_size, ranks no input had
  std::optional<StragglerFinding> straggler;
};

} // namespace gpuwise::advisor
