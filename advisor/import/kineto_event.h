// One decoded Chrome-trace event as the Kineto importer sees it: the head fields every event has
// and the few `args` the model needs. Strings are views into the batch being parsed (or simdjson's
// string buffer for escaped ones): valid only while that batch is parsed, so the builder copies
// (interns) what it keeps.
#pragma once

#include "profiler/model/events.h"

#include <cstdint>
#include <string_view>

namespace gpuwise::advisor {

// The `cat` of an event, both eras of the format (2021: Kernel/Memcpy/Memset/Runtime/Operator;
// later: kernel/gpu_memcpy/gpu_memset/cuda_runtime/cuda_driver/cpu_op ...).
enum class KinetoCategory : uint8_t {
  None,           // no "cat" (metadata "M" events, 2021 "[memory]" instants)
  Kernel,         // kernel, Kernel
  Memcpy,         // gpu_memcpy, Memcpy
  Memset,         // gpu_memset, Memset
  Runtime,        // cuda_runtime, Runtime (HIP runtime calls too)
  Driver,         // cuda_driver
  CudaSync,       // cuda_sync
  UserAnnotation, // user_annotation
  GpuAnnotation,  // gpu_user_annotation
  CpuOp,          // cpu_op, Operator
  Python,         // python_function
  CpuInstant,     // cpu_instant_event ("[memory]" in current traces)
  MtiaDevice,     // mtia_ccp_events: work on an MTIA device
  MtiaRuntime,    // mtia_runtime: host calls into the MTIA runtime
  Other,          // flows (ac2g, async, fwdbwd), Trace spans, overhead, profiler ranges ...
};

KinetoCategory classifyCategory(std::string_view cat);

struct KinetoEvent {
  KinetoCategory cat = KinetoCategory::None;
  char ph = 0;           // 'X' complete, 'i' instant, 'M' metadata, 's'/'f' flow ...
  std::string_view name; // unescaped
  int64_t pid = 0;
  int64_t tid = 0;
  bool pid_numeric = false; // pid was a number or a numeric string ("Spans" is not)
  bool tid_numeric = false; // tid had a trailing number ("stream 7", "25738")
  bool has_ts = false, has_dur = false;
  model::TimeNs ts = 0, dur = 0;
};

// The `args` the importer reads; a field is present when its has_ flag is set (or, for ints,
// when >= 0 where negatives mean "absent").
struct KinetoArgs {
  int64_t device = -1;
  int64_t stream = -1;
  uint64_t correlation = 0;
  int64_t bytes = -1; // "bytes" (copies, memsets) or "size" (MTIA DMA)
  bool has_grid = false, has_block = false;
  model::Dim3 grid, block;
  int64_t registers = -1;
  int64_t shared_memory = -1;  // Kineto's "shared memory" = static + dynamic
  int64_t static_shared = -1;  // ours, from the exporter
  int64_t dynamic_shared = -1; // ours, from the exporter
  double occupancy_pct = -1;   // "est. achieved occupancy %"
  int64_t graph_id = -1;
  bool cooperative = false;
  bool collective = false; // "Collective name" present: a communication kernel
  // The collective's own args (record_param_comms, and newer PyTorch's collective kernels).
  std::string_view collective_name; // "Collective name": "allreduce", "_allgather_base", ...
  std::string_view dtype;           // "dtype": "Float", "BFloat16", ...
  std::string_view process_group;   // "Process Group Name"
  int64_t in_nelems = -1, out_nelems = -1, group_size = -1;
  int64_t external_id = -1;   // "External id": joins an operator to the kernels it launched
  std::string_view sync_kind; // cuda_sync "cuda_sync_kind"
  std::string_view direction; // MTIA DMA "direction"
  // "[memory]" instants.
  int64_t device_type = -1;
  int64_t device_id = -1;
  bool has_addr = false;
  uint64_t addr = 0;
  bool has_mem_bytes = false;
  int64_t mem_bytes = 0; // "Bytes": > 0 allocation, < 0 free
  int64_t total_allocated = -1;
  int64_t total_reserved = -1;
  // Metadata events: process_name / process_labels / thread_name.
  std::string_view meta_name;
  std::string_view labels;
  // Written by our exporter so a range keeps its kind through a round trip.
  std::string_view gw_kind;
  int64_t gw_step = -1;
};

} // namespace gpuwise::advisor
