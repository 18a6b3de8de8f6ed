// Turns CUPTI activity buffers into model records, joining each GPU record (kernel, copy, memset,
// synchronisation) to the host API call that caused it through CUPTI's correlation id: the API
// record gives the launching thread and the call's start and end.
//
// The join is bounded and ages out. API records are kept for `hold_ns` after they arrive (a graph
// launch's correlation id is shared by all its kernels, so an API record serves many GPU records);
// a GPU record whose API record has not arrived yet is held up to `hold_ns`, then emitted without
// launch information rather than lost. Both tables have a size cap; past it the oldest entries go
// first (held GPU records are emitted, never dropped).
//
// Besides the GPU records it decodes NVTX markers (MARKER: start/end pairs, push/pop ranges and
// instantaneous markers become model::Range, NVTX "step" ranges RangeKind::Step so the step
// analyzer uses them), CUPTI's own OVERHEAD records (summed, for the shim-cost figures) and
// GRAPH_TRACE records (counted; gpuwise does not enable that kind, it hides per-node kernels).
// Kernels keep CUPTI's graphId and graphNodeId, so each graph-node kernel is attributed to its
// graph and node; graph launches are counted from their API records.
//
// Threads: drain thread only. Buffers are walked with cuptiActivityGetNextRecord through the port.
#pragma once

#include "profiler/cupti/api_class.h"
#include "profiler/model/events.h"
#include "profiler/model/name_table.h"
#include "profiler/model/range_names.h"

#include <cstdint>
#include <deque>
#include <map>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace gpuwise::profiler {

class CuptiPort;
class TimestampMapper;

// What one decode()/age() call produced.
struct DecodedActivity {
  std::vector<model::KernelExec> kernels;
  std::vector<model::Copy> copies;
  std::vector<model::Memset> memsets;
  std::vector<model::HostSync> syncs;
  std::vector<model::Allocation> allocations;
  std::vector<model::Range> ranges; // NVTX ranges and markers (markers: start == end)
  std::vector<ApiSpan> api_spans;   // traced API calls, for the interposer's coverage check
  uint64_t cupti_overhead_ns = 0;   // CUPTI's own OVERHEAD records in these buffers, summed
  void clear();
  size_t recordCount() const {
    return kernels.size() + copies.size() + memsets.size() + syncs.size() + allocations.size() +
           ranges.size();
  }
};

using model::nvtxRangeKind; // profiler/model/range_names.h

class ActivityDecoder {
public:
  struct Options {
    int64_t hold_ns = 1000000000; // 1 s
    size_t max_api_entries = 1 << 16;
    size_t max_held_records = 1 << 16;
    size_t max_open_ranges = 4096;     // NVTX ranges started and not yet ended
    bool keep_operator_ranges = false; // emit_nvtx's per-operator ranges: many, rarely wanted
  };
  struct Stats {
    uint64_t records = 0;          // every record walked
    uint64_t joined = 0;           // GPU records emitted with their API call
    uint64_t unjoined = 0;         // GPU records emitted without (API record never came)
    uint64_t ignored = 0;          // kinds we do not decode
    uint64_t evicted_api = 0;      // API records pushed out by the size cap
    uint64_t bad_buffers = 0;      // walks that ended in an error other than end-of-buffer
    uint64_t graph_launches = 0;   // graph launches seen (API records, one per correlation id)
    uint64_t graph_kernels = 0;    // kernels that ran as graph nodes
    uint64_t graph_traces = 0;     // GRAPH_TRACE records (whole-graph executions)
    uint64_t markers = 0;          // MARKER records
    uint64_t ranges_unmatched = 0; // NVTX ends without a start, or starts evicted by the cap
    uint64_t operator_ranges = 0;  // emit_nvtx operator ranges skipped (keep_operator_ranges off)
    uint64_t overhead_records = 0;
    uint64_t overhead_ns = 0; // CUPTI's own time, every OVERHEAD record summed
  };

  // `names` receives kernel names; it must outlive the decoder.
  ActivityDecoder(CuptiPort& port, model::NameTable& names, Options options);
  ActivityDecoder(CuptiPort& port, model::NameTable& names)
      : ActivityDecoder(port, names, Options{}) {}

  // Walks one completed buffer. `now_ns`: the drain thread's current time, for ageing.
  void decode(uint8_t* buffer, size_t valid_bytes, int64_t now_ns, DecodedActivity& out);
  // Emits held GPU records older than hold_ns and forgets API records older than that.
  void age(int64_t now_ns, DecodedActivity& out);
  // Emits every held record (final flush).
  void flushHeld(DecodedActivity& out);

  // When CUPTI stamps records with its own clock (CuptiCollector::hostMapping() not null): every
  // time decoded afterwards is mapped onto the host's timeline through `mapper` (owned by the
  // collector, which outlives the decoder). Null: times are already ours.
  void setTimestampMapper(const TimestampMapper* mapper) { mapper_ = mapper; }

  const Stats& stats() const { return stats_; }
  size_t heldRecords() const { return held_count_; }
  size_t apiEntries() const { return api_.size(); }
  size_t openRanges() const { return open_ranges_.size(); }

private:
  struct ApiInfo {
    int64_t start = 0, end = 0;
    uint32_t thread = 0;
    int64_t arrived = 0;
  };
  enum class HeldKind : uint8_t { Kernel, Copy, Memset, Sync };
  struct Held {
    HeldKind kind;
    int64_t arrived;
    model::KernelExec kernel;
    model::Copy copy;
    model::Memset memset;
    model::HostSync sync;
  };

  struct OpenRange {
    int64_t start = 0;
    model::NameId name = 0;
    uint32_t thread = 0;
    model::RangeKind kind = model::RangeKind::Unknown;
    int64_t step = -1;
  };

  void onMarker(const void* marker2, DecodedActivity& out); // a CUpti_ActivityMarker2
  void onApi(const ApiSpan& span, int64_t now_ns, DecodedActivity& out);
  void onGpu(Held&& held, uint32_t correlation, int64_t now_ns, DecodedActivity& out);
  static void join(Held& held, const ApiInfo& api);
  void emit(Held& held, DecodedActivity& out);
  uint32_t deviceOfContext(uint32_t context) const;

  int64_t host(uint64_t t) const;

  CuptiPort& port_;
  const TimestampMapper* mapper_ = nullptr;
  model::NameTable& names_;
  Options options_;
  Stats stats_;
  std::unordered_map<uint32_t, ApiInfo> api_;
  std::deque<std::pair<int64_t, uint32_t>> api_order_; // (arrived, correlation)
  std::unordered_map<uint32_t, std::vector<Held>> held_;
  std::deque<std::pair<int64_t, uint32_t>> held_order_;
  size_t held_count_ = 0;
  std::unordered_map<uint32_t, uint32_t> context_device_;
  std::map<uint32_t, OpenRange> open_ranges_; // by marker id: CUPTI hands them out increasing
};

} // namespace gpuwise::profiler
