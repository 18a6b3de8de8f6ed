#include "advisor/rules/gpu_tables.h"

namespace gpuwise::advisor {
namespace {

MathThroughput throughputOf(const GpuClass& c) {
  return {c.family, c.fp32_tflops, c.tf32_tensor_tflops, c.bf16_tensor_tflops, c.fp16_tensor_tflops,
          true};
}

} // namespace

// The ratio of a tensor rate to the FP32 rate bounds what moving GEMMs and convolutions to tensor
// cores can gain; real kernels reach less (memory bound layers), which is why the precision rules
// report table-based estimates with medium confidence at most.
MathThroughput mathThroughputFor(std::string_view name, int major, int minor) {
  // AMD GPUs: the precision rules' advice is written for NVIDIA's tensor cores.
  if (const GpuClass* c = findGpuClass(name); c && c->vendor == GpuVendor::Nvidia)
    return throughputOf(*c);
  const char* representative = nullptr;
  if (major == 7 && minor == 0)
    representative = "V100";
  else if (major == 7 && minor == 5)
    representative = "T4";
  else if (major == 8 && minor == 0)
    representative = "A100 80GB";
  else if (major == 8)
    representative = "A10";
  else if (major == 9)
    representative = "H100 SXM";
  else if (major == 10)
    representative = "B200";
  if (!representative) return {};
  MathThroughput t = throughputOf(*gpuClassNamed(representative));
  t.known = false; // the architecture's representative, not this GPU's own figures
  return t;
}

// PCIe variants of NVLink GPUs ("A100-PCIE-40GB", "H100 PCIe") get no NVLink: the bridge that
// would give them some is optional.
LinkBandwidth linkBandwidthFor(std::string_view name) {
  const GpuClass* c = findGpuClass(name);
  if (!c || c->vendor != GpuVendor::Nvidia) return {};
  LinkBandwidth l{c->family, c->nvlink_gb_per_s, c->pcie_gb_per_s, true};
  if (containsWord(name, "PCIe") || name.find("PCIE") != std::string_view::npos)
    l.nvlink_gb_per_s = 0;
  return l;
}

MigGpu migGpuFor(std::string_view name, uint64_t memory_total_bytes) {
  const GpuClass* c = findGpuClass(name, memory_total_bytes);
  return c && c->mig ? *c->mig : MigGpu{};
}

} // namespace gpuwise::advisor
