// Test helper: the kernel events and device properties of the real Kineto traces in
// ../shared/traces/kineto, read directly (gzip + simdjson) so the precision and occupancy tests do
// not depend on the advisor's importer. Shared by tests/advisor/precision and .../occupancy.
//
// Single-threaded test code; loading the whole corpus takes a few seconds, so tests load it once.
#pragma once

#include "profiler/model/process.h"

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace gpuwise::test {

struct KinetoKernel {
  std::string name;
  uint32_t device = 0;
  std::array<uint32_t, 3> grid{0, 0, 0};
  std::array<uint32_t, 3> block{0, 0, 0};
  int64_t registers_per_thread = -1; // -1: the trace does not say
  int64_t shared_memory = -1;        // static + dynamic bytes, as Kineto records it
  double blocks_per_sm = -1;
  double est_achieved_occupancy_pct = -1;
};

// One entry of Kineto's "deviceProperties"; 0 where the trace gives nothing.
struct KinetoDevice {
  uint32_t id = 0;
  std::string name;
  int compute_major = 0, compute_minor = 0;
  uint32_t num_sms = 0;
  uint32_t max_threads_per_block = 0, max_threads_per_sm = 0;
  uint32_t regs_per_block = 0, regs_per_sm = 0;
  uint32_t shared_mem_per_block = 0, shared_mem_per_block_optin = 0, shared_mem_per_sm = 0;
  uint32_t warp_size = 0;
};

struct KinetoTrace {
  std::string path; // relative to the corpus root, e.g. "tracelens/b200/eager_trace.json.gz"
  std::vector<KinetoDevice> devices;
  std::vector<KinetoKernel> kernels; // every event of category "kernel" / "Kernel"

  // The properties of `device`, or nullptr when the trace has none for it.
  const KinetoDevice* deviceProperties(uint32_t device) const;
};

struct KinetoCorpus {
  std::vector<KinetoTrace> traces;  // files that parsed as a JSON object with traceEvents
  std::vector<std::string> skipped; // "path: why" for files that did not
};

// Every *.json and *.json.gz file under `root`, in path order.
KinetoCorpus loadKinetoCorpus(const std::filesystem::path& root);

// kineto/ of the full set ($GPUWISE_TRACES_DIR, CTest sets it), or of the subset in
// tests/data/traces where the full set is absent (tests/traces_dir.h).
std::filesystem::path kinetoTracesDir();

// The DeviceInfo an importer would build from Kineto's deviceProperties.
model::DeviceInfo toDeviceInfo(const KinetoDevice& device);

} // namespace gpuwise::test
