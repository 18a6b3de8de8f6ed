#include "profiler/nvml/nvml_monitor.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace gpuwise::profiler {

std::string formatUuid(const uint8_t (&b)[16], std::string_view prefix) {
  char buf[64];
  std::snprintf(buf, sizeof buf,
                "%.*s-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                int(prefix.size()), prefix.data(), b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
                b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return buf;
}

std::string migProfileFromName(std::string_view name) {
  // The profile follows "MIG " and looks like <N>g.<M>gb, optionally with "+me" or "-me" flags.
  size_t at = name.rfind("MIG ");
  if (at == std::string_view::npos) return {};
  std::string_view p = name.substr(at + 4);
  while (!p.empty() && p.back() == ' ')
    p.remove_suffix(1);
  size_t g = p.find("g.");
  if (g == 0 || g == std::string_view::npos) return {};
  for (size_t i = 0; i < g; ++i)
    if (!std::isdigit(static_cast<unsigned char>(p[i]))) return {};
  if (p.find("gb", g) == std::string_view::npos) return {};
  return std::string(p);
}

NvmlMonitor::~NvmlMonitor() {
  close();
}

Status NvmlMonitor::open() {
  if (open_) return {};
  if (!port_.available()) return unexpected(std::string(port_.whyUnavailable()));
  nvmlReturn_t r = port_.init();
  if (r != NVML_SUCCESS) return unexpected(std::string("nvmlInit_v2: ") + port_.errorString(r));
  open_ = true;
  return {};
}

void NvmlMonitor::close() {
  if (!open_) return;
  open_ = false;
  tracked_.clear();
  port_.shutdown();
}

nvmlDevice_t NvmlMonitor::match(uint32_t cuda_index, const uint8_t (&uuid)[16]) {
  bool known = false;
  for (uint8_t b : uuid)
    known |= b != 0;
  nvmlDevice_t h = nullptr;
  if (known) {
    // A MIG slice's CUDA UUID is the slice's: NVML prints it "MIG-"; a whole GPU's "GPU-".
    if (port_.deviceGetHandleByUUID(formatUuid(uuid, "GPU").c_str(), &h) == NVML_SUCCESS) return h;
    if (port_.deviceGetHandleByUUID(formatUuid(uuid, "MIG").c_str(), &h) == NVML_SUCCESS) return h;
    // Found nothing by UUID although NVML can look them up: another process's device view.
    unsigned int n = 0;
    for (unsigned int i = 0; port_.deviceGetCount(&n) == NVML_SUCCESS && i < n; ++i) {
      char text[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
      if (port_.deviceGetHandleByIndex(i, &h) == NVML_SUCCESS &&
          port_.deviceGetUUID(h, text, sizeof text) == NVML_SUCCESS &&
          (formatUuid(uuid, "GPU") == text || formatUuid(uuid, "MIG") == text))
        return h;
    }
    return nullptr;
  }
  // No UUID from CUDA: by index, only when CUDA sees every NVML device in order.
  if (std::getenv("CUDA_VISIBLE_DEVICES")) return nullptr;
  if (port_.deviceGetHandleByIndex(cuda_index, &h) == NVML_SUCCESS) return h;
  return nullptr;
}

std::string NvmlMonitor::migProfileOf(nvmlDevice_t h, const std::string& name) {
  if (std::string p = migProfileFromName(name); !p.empty()) return p;
  // From the GPU instance's profile (needs the parent handle and, on some drivers, privileges).
  nvmlDevice_t parent = nullptr;
  unsigned int gi = 0;
  nvmlGpuInstance_t instance = nullptr;
  nvmlGpuInstanceInfo_t info{};
  if (port_.deviceGetDeviceHandleFromMigDeviceHandle(h, &parent) != NVML_SUCCESS ||
      port_.deviceGetGpuInstanceId(h, &gi) != NVML_SUCCESS ||
      port_.deviceGetGpuInstanceById(parent, gi, &instance) != NVML_SUCCESS ||
      port_.gpuInstanceGetInfo(instance, &info) != NVML_SUCCESS)
    return {};
  for (unsigned int p = 0; p < NVML_GPU_INSTANCE_PROFILE_COUNT; ++p) {
    nvmlGpuInstanceProfileInfo_v2_t pi{};
    pi.version = nvmlGpuInstanceProfileInfo_v2;
    if (port_.deviceGetGpuInstanceProfileInfoV(parent, p, &pi) != NVML_SUCCESS) continue;
    if (pi.id != info.profileId) continue;
    pi.name[sizeof pi.name - 1] = '\0';
    return migProfileFromName(pi.name);
  }
  return {};
}

NvmlDeviceFacts NvmlMonitor::identify(uint32_t cuda_index, const uint8_t (&uuid)[16]) {
  NvmlDeviceFacts f;
  if (!open_) return f;
  nvmlDevice_t h = match(cuda_index, uuid);
  if (!h) return f;
  f.found = true;
  char text[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
  if (port_.deviceGetUUID(h, text, sizeof text) == NVML_SUCCESS) {
    text[sizeof text - 1] = '\0';
    f.uuid = text;
  }
  char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = {};
  if (port_.deviceGetName(h, name, sizeof name) == NVML_SUCCESS) {
    name[sizeof name - 1] = '\0';
    f.name = name;
  }
  unsigned int is_mig = 0;
  f.mig = port_.deviceIsMigDeviceHandle(h, &is_mig) == NVML_SUCCESS && is_mig != 0;
  nvmlDevice_t whole = h; // the GPU whose index the node knows: a slice's parent
  if (f.mig && port_.deviceGetDeviceHandleFromMigDeviceHandle(h, &whole) != NVML_SUCCESS)
    whole = nullptr;
  if (unsigned int index = 0; whole && port_.deviceGetIndex(whole, &index) == NVML_SUCCESS)
    f.index = index;
  if (f.mig) {
    unsigned int id = 0;
    if (port_.deviceGetGpuInstanceId(h, &id) == NVML_SUCCESS) f.gpu_instance = id;
    if (port_.deviceGetComputeInstanceId(h, &id) == NVML_SUCCESS) f.compute_instance = id;
    f.mig_profile = migProfileOf(h, f.name);
  }
  nvmlMemory_t mem{};
  if (port_.deviceGetMemoryInfo(h, &mem) == NVML_SUCCESS) f.memory_total_bytes = mem.total;
  for (auto& t : tracked_)
    if (t.cuda_index == cuda_index) {
      t.handle = h;
      return f;
    }
  tracked_.push_back({cuda_index, h});
  return f;
}

void NvmlMonitor::sample(model::TimeNs now, uint32_t pid, std::vector<model::DeviceSample>& out) {
  if (!open_) return;
  for (const auto& t : tracked_) {
    model::DeviceSample s;
    s.time = now;
    s.device = t.cuda_index;
    nvmlMemory_t mem{};
    if (port_.deviceGetMemoryInfo(t.handle, &mem) == NVML_SUCCESS) {
      s.device_used_bytes = int64_t(mem.used);
      s.device_total_bytes = int64_t(mem.total);
    }
    nvmlUtilization_t u{};
    // Not supported on MIG slices: stays unknown there.
    if (port_.deviceGetUtilizationRates(t.handle, &u) == NVML_SUCCESS) {
      s.gpu_utilization = int32_t(u.gpu);
      s.memory_utilization = int32_t(u.memory);
    }
    // Two tries: the list can grow between the size query and the read.
    for (int attempt = 0; attempt < 2; ++attempt) {
      unsigned int n = unsigned(processes_.size());
      nvmlReturn_t r = port_.deviceGetComputeRunningProcesses(t.handle, &n, processes_.data());
      if (r == NVML_ERROR_INSUFFICIENT_SIZE) {
        processes_.resize(n + 8);
        continue;
      }
      if (r != NVML_SUCCESS) break;
      for (unsigned int i = 0; i < n && i < processes_.size(); ++i)
        if (processes_[i].pid == pid && processes_[i].usedGpuMemory != NVML_VALUE_NOT_AVAILABLE)
          s.process_used_bytes = int64_t(processes_[i].usedGpuMemory);
      break;
    }
    out.push_back(s);
  }
}

void NvmlMonitor::sample(model::TimeNs now, uint32_t pid, std::vector<model::DeviceSample>& out,
                         std::vector<model::PowerSample>& power) {
  sample(now, pid, out);
  if (!open_) return;
  for (auto& t : tracked_)
    power.push_back(readPower(now, t));
}

model::PowerSample NvmlMonitor::readPower(model::TimeNs now, Tracked& t) {
  model::PowerSample p;
  p.time = now;
  p.device = t.cuda_index;
  // NOT_SUPPORTED is the device's answer for good: counted once, not asked again.
  auto unsupported = [&](nvmlReturn_t r, bool& supported, uint64_t& count) {
    if (r != NVML_ERROR_NOT_SUPPORTED) return false;
    supported = false;
    ++count;
    return true;
  };
  if (t.energy_supported) {
    unsigned long long mj = 0;
    nvmlReturn_t r = port_.deviceGetTotalEnergyConsumption(t.handle, &mj);
    if (r == NVML_SUCCESS && mj <= uint64_t(INT64_MAX))
      p.energy_mj = int64_t(mj);
    else if (!unsupported(r, t.energy_supported, power_reads_.energy_not_supported))
      ++power_reads_.errors;
  }
  if (t.power_supported) {
    unsigned int mw = 0;
    nvmlReturn_t r = port_.deviceGetPowerUsage(t.handle, &mw);
    if (r == NVML_SUCCESS && mw <= unsigned(INT32_MAX))
      p.power_mw = int32_t(mw);
    else if (!unsupported(r, t.power_supported, power_reads_.power_not_supported))
      ++power_reads_.errors;
  }
  for (auto [type, field] : {std::pair{NVML_CLOCK_SM, &p.sm_clock_mhz},
                             std::pair{NVML_CLOCK_MEM, &p.memory_clock_mhz}}) {
    unsigned int mhz = 0;
    nvmlReturn_t r = port_.deviceGetClockInfo(t.handle, type, &mhz);
    if (r == NVML_SUCCESS && mhz <= unsigned(INT32_MAX))
      *field = int32_t(mhz);
    else if (r != NVML_ERROR_NOT_SUPPORTED)
      ++power_reads_.errors;
  }
  return p;
}

} // namespace gpuwise::profiler
