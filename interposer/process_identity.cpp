#include "interposer/process_identity.h"

#include <cuda_runtime_api.h>

#include <cctype>
#include <cstdio>
#include <cstring>

#include <dlfcn.h>
#include <unistd.h>

namespace gpuwise::interposer {

std::string readCommandLine(const char* proc_root) {
  std::string path = std::string(proc_root) + "/self/cmdline";
  std::FILE* f = std::fopen(path.c_str(), "re");
  if (!f) return {};
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0 && out.size() < (1u << 16))
    out.append(buf, n);
  std::fclose(f);
  while (!out.empty() && out.back() == '\0')
    out.pop_back();
  for (char& c : out)
    if (c == '\0') c = ' ';
  return out;
}

model::ProcessInfo readProcessInfo(const Config& config, const char* proc_root) {
  model::ProcessInfo p;
  p.pid = getpid();
  p.ppid = getppid();
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) p.host = host;
  p.command = readCommandLine(proc_root);
  p.rank = config.rank;
  p.local_rank = config.local_rank;
  p.world_size = config.world_size;
  p.pod = config.pod;
  p.ns = config.ns;
  p.container = config.container;
  p.job = config.job;
  // The node dcgm-exporter's Hostname names: the webhook's GPUWISE_NODE, else the host name
  // (outside a pod they are the same machine).
  p.node = config.node.empty() ? p.host : config.node;
  return p;
}

namespace {

// The runtime's own entry point: the versioned one the real libcudart exports, else any.
void* runtimeSymbol(const char* name) {
  if (void* p = dlvsym(RTLD_DEFAULT, name, "libcudart.so.13")) return p;
  return dlsym(RTLD_DEFAULT, name);
}

} // namespace

std::string migProfileFromName(const std::string& name) {
  size_t at = name.rfind(" MIG ");
  if (at == std::string::npos) return {};
  std::string rest = name.substr(at + 5);
  while (!rest.empty() && rest.back() == ' ')
    rest.pop_back();
  // "<n>g.<size>gb" with an optional "<m>c." in front: digits, 'c', 'g', '.', letters only.
  size_t g = rest.find("g.");
  if (rest.empty() || g == std::string::npos || g == 0 || rest.find(' ') != std::string::npos)
    return {};
  if (!std::isdigit(static_cast<unsigned char>(rest[0]))) return {};
  return rest;
}

DeviceQuery queryDevices() {
  DeviceQuery q;
  if (auto sim = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "gwsimIsSimulated")))
    q.simulated = sim() == 1;
  auto count_fn =
      reinterpret_cast<decltype(&cudaGetDeviceCount)>(runtimeSymbol("cudaGetDeviceCount"));
  auto props_fn = reinterpret_cast<decltype(&cudaGetDeviceProperties)>(
      runtimeSymbol("cudaGetDeviceProperties"));
  auto attr_fn =
      reinterpret_cast<decltype(&cudaDeviceGetAttribute)>(runtimeSymbol("cudaDeviceGetAttribute"));
  if (!count_fn) return q;
  int count = 0;
  if (count_fn(&count) != cudaSuccess || count <= 0) return q;
  if (count > 64) count = 64;
  for (int d = 0; d < count; ++d) {
    model::DeviceInfo info;
    std::array<uint8_t, 16> uuid{};
    info.index = uint32_t(d);
    info.simulated = q.simulated;
    if (props_fn) {
      cudaDeviceProp prop;
      std::memset(&prop, 0, sizeof prop);
      if (props_fn(&prop, d) == cudaSuccess) {
        info.name.assign(prop.name, strnlen(prop.name, sizeof prop.name));
        info.mig_profile = migProfileFromName(info.name);
        info.memory_total_bytes = prop.totalGlobalMem;
        info.sm_count = uint32_t(prop.multiProcessorCount);
        info.compute_major = prop.major;
        info.compute_minor = prop.minor;
        info.max_threads_per_sm = uint32_t(prop.maxThreadsPerMultiProcessor);
        info.max_blocks_per_sm = uint32_t(prop.maxBlocksPerMultiProcessor);
        info.registers_per_sm = uint32_t(prop.regsPerMultiprocessor);
        info.shared_memory_per_sm = uint32_t(prop.sharedMemPerMultiprocessor);
        info.max_shared_memory_per_block = uint32_t(prop.sharedMemPerBlockOptin);
        info.warp_size = uint32_t(prop.warpSize);
        std::memcpy(uuid.data(), prop.uuid.bytes, uuid.size());
      }
    }
    if (attr_fn) {
      // Attributes fill what a partial cudaDeviceProp (a stand-in runtime) left out.
      auto attr = [&](cudaDeviceAttr a, auto& field) {
        int v = 0;
        if (field == 0 && attr_fn(&v, a, d) == cudaSuccess && v > 0) field = decltype(+field)(v);
      };
      attr(cudaDevAttrMultiProcessorCount, info.sm_count);
      attr(cudaDevAttrComputeCapabilityMajor, info.compute_major);
      attr(cudaDevAttrComputeCapabilityMinor, info.compute_minor);
      attr(cudaDevAttrMaxThreadsPerMultiProcessor, info.max_threads_per_sm);
      attr(cudaDevAttrMaxBlocksPerMultiprocessor, info.max_blocks_per_sm);
      attr(cudaDevAttrMaxRegistersPerMultiprocessor, info.registers_per_sm);
      attr(cudaDevAttrMaxSharedMemoryPerMultiprocessor, info.shared_memory_per_sm);
      attr(cudaDevAttrMaxSharedMemoryPerBlockOptin, info.max_shared_memory_per_block);
      attr(cudaDevAttrWarpSize, info.warp_size);
    }
    q.devices.push_back(std::move(info));
    q.uuids.push_back(uuid);
  }
  return q;
}

} // namespace gpuwise::interposer
