// Device facts and samples from NVML: which physical GPU (UUID) or MIG slice (UUID, GPU/compute
// instance, profile "1g.18gb") each CUDA device of the process is, and, every sample, the memory
// this process uses there, the device's used memory and its utilisation.
//
// CUDA devices are matched to NVML handles by UUID (cudaDeviceProp::uuid formatted "GPU-..." or
// "MIG-...", the way nvidia-smi prints them), so CUDA_VISIBLE_DEVICES reordering and MIG slices
// map right; by index only when NVML cannot look UUIDs up and the counts agree.
//
// Power: every sample also reads the device's energy counter, power draw and SM / memory clocks
// into a PowerSample. A GPU without the energy counter (NVML_ERROR_NOT_SUPPORTED: pre-Volta, MIG
// slices, some boards) is not asked again; its samples carry energy_mj = -1 and the advisor
// integrates power_mw instead (and says so). Other failed reads leave the field at -1 and count.
//
// Known limit: NVML reports host pids. Inside a container with its own pid namespace the process
// is not found in the compute-process list, and process_used_bytes stays unknown (-1).
//
// Threads: one thread (the shim's drain thread). Never on an application thread: NVML calls take
// milliseconds. Never throws.
#pragma once

#include "profiler/model/events.h"
#include "profiler/model/expected.h"
#include "profiler/nvml/nvml_port.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpuwise::profiler {

struct NvmlDeviceFacts {
  bool found = false;      // an NVML handle matched the CUDA device
  std::string uuid;        // "GPU-..." or "MIG-..."
  std::string name;        // NVML's name ("NVIDIA H200", "NVIDIA H200 MIG 1g.18gb")
  bool mig = false;        // the handle is a MIG slice
  std::string mig_profile; // "1g.18gb" on a slice, empty otherwise
  uint32_t gpu_instance = UINT32_MAX, compute_instance = UINT32_MAX;
  // The node's index of the GPU (of the parent GPU on a slice); UINT32_MAX when NVML cannot say.
  uint32_t index = UINT32_MAX;
  uint64_t memory_total_bytes = 0; // of the slice on MIG
};

// Failed power reads since open(), by kind.
struct NvmlPowerReads {
  uint64_t energy_not_supported = 0; // devices found without the energy counter (once each)
  uint64_t power_not_supported = 0;  // devices found without power readings (once each)
  uint64_t errors = 0;               // any other failed energy, power or clock read
};

class NvmlMonitor {
public:
  explicit NvmlMonitor(NvmlPort& port) : port_(port) {}
  ~NvmlMonitor();
  NvmlMonitor(const NvmlMonitor&) = delete;
  NvmlMonitor& operator=(const NvmlMonitor&) = delete;

  // nvmlInit. An error saying why when NVML is absent or does not initialise.
  Status open();
  bool isOpen() const { return open_; }

  // Matches CUDA device `cuda_index`, whose cudaDeviceProp::uuid is `uuid` (all zero: unknown),
  // and reads its facts. The device is sampled from then on.
  NvmlDeviceFacts identify(uint32_t cuda_index, const uint8_t (&uuid)[16]);

  // Appends one DeviceSample per identified device, stamped `now`. `pid`: this process.
  void sample(model::TimeNs now, uint32_t pid, std::vector<model::DeviceSample>& out);
  // The same, and one PowerSample per identified device in `power`.
  void sample(model::TimeNs now, uint32_t pid, std::vector<model::DeviceSample>& out,
              std::vector<model::PowerSample>& power);
  const NvmlPowerReads& powerReads() const { return power_reads_; }

  // nvmlShutdown (once; also on destruction).
  void close();

private:
  struct Tracked {
    uint32_t cuda_index;
    nvmlDevice_t handle;
    bool energy_supported = true, power_supported = true; // until NVML says NOT_SUPPORTED
  };
  model::PowerSample readPower(model::TimeNs now, Tracked& t);
  nvmlDevice_t match(uint32_t cuda_index, const uint8_t (&uuid)[16]);
  std::string migProfileOf(nvmlDevice_t handle, const std::string& name);

  NvmlPort& port_;
  bool open_ = false;
  std::vector<Tracked> tracked_;
  std::vector<nvmlProcessInfo_t> processes_; // reused between samples
  NvmlPowerReads power_reads_;
};

// "GPU-1a2b3c4d-..." from cudaDeviceProp::uuid (the prefix is "GPU" or "MIG").
std::string formatUuid(const uint8_t (&bytes)[16], std::string_view prefix);
// "1g.18gb" from "NVIDIA H200 MIG 1g.18gb" or "MIG 1g.18gb"; empty when the name has no profile.
std::string migProfileFromName(std::string_view name);

} // namespace gpuwise::profiler
