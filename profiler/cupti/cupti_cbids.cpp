#include "profiler/cupti/cupti_cbids.h"

#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>

namespace gpuwise::profiler {

namespace {

#define RT(name, cls)                                                                              \
  { CUPTI_RUNTIME_TRACE_CBID_##name, ApiClass::cls }
constexpr TracedCbid kRuntime[] = {
    // CUDA 13's <<<>>> path goes through __cudaLaunchKernel; older code through cudaLaunchKernel.
    RT(__cudaLaunchKernel_v13000, Launch),
    RT(__cudaLaunchKernel_ptsz_v13000, Launch),
    RT(cudaLaunchKernel_v7000, Launch),
    RT(cudaLaunchKernel_ptsz_v7000, Launch),
    RT(cudaLaunchKernelExC_v11060, Launch),
    RT(cudaLaunchKernelExC_ptsz_v11060, Launch),
    RT(cudaMemcpy_v3020, Copy),
    RT(cudaMemcpy2D_v3020, Copy),
    RT(cudaMemcpyAsync_v3020, Copy),
    RT(cudaMemcpy2DAsync_v3020, Copy),
    RT(cudaMemcpy_ptds_v7000, Copy),
    RT(cudaMemcpy2D_ptds_v7000, Copy),
    RT(cudaMemcpyAsync_ptsz_v7000, Copy),
    RT(cudaMemcpy2DAsync_ptsz_v7000, Copy),
    RT(cudaMemset_v3020, Memset),
    RT(cudaMemsetAsync_v3020, Memset),
    RT(cudaMemset_ptds_v7000, Memset),
    RT(cudaMemsetAsync_ptsz_v7000, Memset),
    RT(cudaDeviceSynchronize_v3020, Sync),
    RT(cudaStreamSynchronize_v3020, Sync),
    RT(cudaStreamSynchronize_ptsz_v7000, Sync),
    RT(cudaEventSynchronize_v3020, Sync),
    RT(cudaStreamWaitEvent_v3020, Sync),
    RT(cudaStreamWaitEvent_ptsz_v7000, Sync),
    RT(cudaGraphLaunch_v10000, GraphLaunch),
    RT(cudaGraphLaunch_ptsz_v10000, GraphLaunch),
};
#undef RT

#define DRV(name, cls)                                                                             \
  { CUPTI_DRIVER_TRACE_CBID_##name, ApiClass::cls }
constexpr TracedCbid kDriver[] = {
    DRV(cuLaunchKernel, Launch),          DRV(cuLaunchKernel_ptsz, Launch),
    DRV(cuLaunchKernelEx, Launch),        DRV(cuLaunchKernelEx_ptsz, Launch),
    DRV(cuMemcpyHtoD_v2, Copy),           DRV(cuMemcpyDtoH_v2, Copy),
    DRV(cuMemcpyDtoD_v2, Copy),           DRV(cuMemcpyHtoDAsync_v2, Copy),
    DRV(cuMemcpyDtoHAsync_v2, Copy),      DRV(cuMemcpyDtoDAsync_v2, Copy),
    DRV(cuMemcpyHtoD_v2_ptds, Copy),      DRV(cuMemcpyDtoH_v2_ptds, Copy),
    DRV(cuMemcpyDtoD_v2_ptds, Copy),      DRV(cuMemcpyHtoDAsync_v2_ptsz, Copy),
    DRV(cuMemcpyDtoHAsync_v2_ptsz, Copy), DRV(cuMemcpyDtoDAsync_v2_ptsz, Copy),
    DRV(cuMemsetD8_v2, Memset),           DRV(cuMemsetD32_v2, Memset),
    DRV(cuMemsetD8Async, Memset),         DRV(cuMemsetD32Async, Memset),
    DRV(cuCtxSynchronize, Sync),          DRV(cuStreamSynchronize, Sync),
    DRV(cuStreamSynchronize_ptsz, Sync),  DRV(cuEventSynchronize, Sync),
    DRV(cuStreamWaitEvent, Sync),         DRV(cuGraphLaunch, GraphLaunch),
    DRV(cuGraphLaunch_ptsz, GraphLaunch),
};
#undef DRV

// Direct-indexed so the drain thread classifies each API record with one load.
constexpr size_t kMaxCbid = 2048;
struct ClassTable {
  ApiClass by_cbid[kMaxCbid] = {};
  explicit ClassTable(std::span<const TracedCbid> traced) {
    for (const auto& t : traced)
      if (t.cbid < kMaxCbid) by_cbid[t.cbid] = t.cls;
  }
};

} // namespace

std::span<const TracedCbid> tracedRuntimeCbids() {
  return kRuntime;
}
std::span<const TracedCbid> tracedDriverCbids() {
  return kDriver;
}

ApiClass classOfCbid(bool runtime, CUpti_CallbackId cbid) {
  static const ClassTable runtime_table(kRuntime);
  static const ClassTable driver_table(kDriver);
  if (cbid >= kMaxCbid) return ApiClass::Other;
  return runtime ? runtime_table.by_cbid[cbid] : driver_table.by_cbid[cbid];
}

} // namespace gpuwise::profiler
