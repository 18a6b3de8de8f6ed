// Who this process is, for the Hello: pid, parent, host, command line, distributed rank and
// Kubernetes identity (from the config, read from the environment at load time), and the devices
// it can see. `proc_root` lets tests point at a fake /proc.
//
// Threads: the drain thread (queryDevices calls into the CUDA runtime; the drain thread is marked
// internal, so the hooks do not record those calls).
#pragma once

#include "interposer/config.h"
#include "profiler/model/process.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace gpuwise::interposer {

model::ProcessInfo readProcessInfo(const Config& config, const char* proc_root = "/proc");

// The command line in <proc_root>/self/cmdline (NUL-separated), arguments joined by spaces.
std::string readCommandLine(const char* proc_root);

struct DeviceQuery {
  std::vector<model::DeviceInfo> devices;
  // cudaDeviceProp::uuid of each device, in the order of `devices` (all zero when unknown): how
  // NVML's handle for the device is found.
  std::vector<std::array<uint8_t, 16>> uuids;
  bool simulated = false; // the runtime is the simulated device (gwsimIsSimulated() returns 1)
};
// The MIG profile in a device name, as CUDA names a MIG instance ("NVIDIA A100-SXM4-40GB MIG
// 1g.5gb" -> "1g.5gb", compute-instance form "... MIG 1c.2g.10gb" -> "1c.2g.10gb"); empty for a
// whole GPU. CUDA's device properties have no MIG field; the name is what the runtime reports.
std::string migProfileFromName(const std::string& name);

// Asks the CUDA runtime loaded in this process (found with dlsym; never linked) for the devices.
// Empty when there is no runtime or it reports no device.
DeviceQuery queryDevices();

} // namespace gpuwise::interposer
