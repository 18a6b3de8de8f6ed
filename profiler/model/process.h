// Who produced the events: the process identity and the devices it used.
#pragma once

#include <cstdint>
#include <string>

namespace gpuwise::model {

// How much the collection could see. The report states it, so a user knows why a figure is null.
enum class CollectionTier : uint8_t {
  Unknown = 0,
  Interposer, // host-side hooks only: no GPU timestamps
  Cupti,      // hooks plus CUPTI activity records with GPU timestamps
  Imported,   // read from a trace file recorded by another tool
};

struct DeviceInfo {
  uint32_t index = 0;
  std::string name;      // "NVIDIA H200", "Tesla V100-DGXS-32GB"
  std::string uuid;      // NVML's "GPU-..." (or "MIG-..." on a slice); empty when unknown
  uint32_t sm_count = 0; // 0 when unknown
  uint64_t memory_total_bytes = 0;
  int compute_major = 0, compute_minor = 0; // 0.0 when unknown
  std::string mig_profile; // "1g.18gb" when running on a MIG instance, empty otherwise
  // Per-SM limits used by the occupancy calculator; 0 when unknown (the calculator then fills
  // them from the compute capability).
  uint32_t max_threads_per_sm = 0;
  uint32_t max_blocks_per_sm = 0;
  uint32_t registers_per_sm = 0;
  uint32_t shared_memory_per_sm = 0;
  uint32_t max_shared_memory_per_block = 0;
  uint32_t warp_size = 0;
  bool simulated = false; // the simulated device (tests/simdevice), never a real GPU
  // The node's index of the GPU (NVML's, nvidia-smi's and dcgm-exporter's `gpu`; on a MIG slice its
  // parent GPU's), whatever CUDA_VISIBLE_DEVICES made `index`; -1 unknown (no NVML).
  int32_t nvml_index = -1;
  int32_t gpu_instance = -1; // the MIG GPU instance id (dcgm-exporter's GPU_I_ID); -1 without MIG
};

struct ProcessInfo {
  int64_t pid = 0;
  int64_t ppid = 0;
  std::string host;
  std::string command; // command line, arguments joined by spaces
  int32_t rank = -1;   // RANK, or distributedInfo.rank; -1 unknown
  int32_t local_rank = -1;
  int32_t world_size = -1;
  std::string pod, ns, container; // Kubernetes identity from the environment, empty outside a pod
  std::string job; // the training job's name (GPUWISE_JOB, set by the webhook); empty unknown
  // The node the process runs on (GPUWISE_NODE, which the webhook sets from spec.nodeName, else the
  // host name); empty when unknown (imported traces). `host` is the pod's host name in a pod.
  std::string node;
  CollectionTier tier = CollectionTier::Unknown;
  std::string tier_reason; // why the tier is what it is ("CUPTI held by another subscriber")
};

// What the shim cost the process it ran in, as the shim measured it: cumulative over the session.
// Only live runs have it (imported traces leave it all zero).
struct ShimCost {
  uint64_t events_recorded = 0; // hook calls written to the rings in full
  uint64_t launches_counted =
      0; // launches the hooks only counted (CUPTI recorded them, or detail shed)
  uint64_t cupti_launch_records = 0; // kernel records CUPTI delivered (CUPTI tier): one per launch
  uint64_t overhead_ns = 0;          // estimated time the hooks added on the application's threads
  uint64_t session_ns = 0;           // wall time the session covered so far
  uint64_t shed_ns = 0;              // wall time spent with launch detail shed (over the budget)
  float full_call_ns = 0;            // calibrated cost of one fully recorded hook call
  float counted_call_ns = 0;         // calibrated cost of one counted launch
  float budget_ratio = 0;            // the overhead budget the shim sheds detail above
  // Time CUPTI itself reported spending (OVERHEAD records: buffer flushes, instrumentation,
  // resource setup), summed over the session. Not part of overhead_ns, which is the hooks' cost.
  uint64_t cupti_overhead_ns = 0;
};

} // namespace gpuwise::model
