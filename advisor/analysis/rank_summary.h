// The ranks of a distributed job side by side: one RankSummary per rank (per process where the
// ranks are unknown), the figures `ranks[]` of the report carries and the per-pod report merge
// reads back, and the straggler the other ranks wait for.
//
// Plain values; any thread.
#pragma once

#include "profiler/model/events.h"

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
  // Its collectives' wait for the last rank to arrive, clocks aligned (collective_alignment.h):
  // the median steady step's wait x its steady steps (every collective without steps). 0 where
  // it cannot be measured: a job of which only this rank's trace is present, or a rank whose
  // collectives match no other's.
  double collective_wait_seconds = 0;
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

// One collective kernel of a process, what the clock alignment needs of it
// (collective_alignment.h).
struct CollectiveTiming {
  model::TimeNs start = 0, end = 0;
  uint64_t channel = 0;  // its communicator's id where known, else (device << 32 | stream)
  uint64_t sequence = 0; // the call's number on its communicator; 0 unknown
  uint64_t bytes = 0;    // 0 unknown
  model::CollectiveKind kind = model::CollectiveKind::Unknown;
};

// At most this many collective kernels of a process are kept (the first ones; ~10 MB): hours of
// a data-parallel job. Where a process had more, the wait is measured on the kept ones and scaled
// by total / kept.
inline constexpr size_t kMaxCollectiveTimings = size_t{1} << 18;

struct ProcessCollectiveTimings {
  int64_t pid = 0;
  int32_t rank = -1;
  std::vector<CollectiveTiming> kernels; // in the order seen (windows append theirs)
  uint64_t total = 0;                    // collective kernels seen, kept or not
};

struct DistributedResult {
  std::vector<RankSummary> ranks; // by rank; one entry for a single-rank job too
  std::optional<int32_t> world_size;
  std::vector<int32_t> missing_ranks; // of world_size, ranks no input had
  std::optional<StragglerFinding> straggler;
  // Every rank's collective wait summed over all its collectives, the ranks' start-up included:
  // what the exposed communication holds that is waiting, not transfer (overlap_communication).
  double collective_wait_all_seconds = 0;
  // The input of the collective waits: every process's collective kernels. Not reported; merged
  // by (pid, rank) so a live run's windows and processes give what one analysis of the whole
  // job gives.
  std::vector<ProcessCollectiveTimings> collectives;
};

} // namespace gpuwise::advisor
