// A bag of model records on their way from the rings and CUPTI to the next batch. Drain thread only.
#pragma once

#include "profiler/model/events.h"

#include <cstddef>
#include <vector>

namespace gpuwise::interposer {

struct Records {
  std::vector<model::KernelExec> kernels;
  std::vector<model::Copy> copies;
  std::vector<model::Memset> memsets;
  std::vector<model::HostSync> syncs;
  std::vector<model::ApiCall> api_calls;
  std::vector<model::Allocation> allocations;
  std::vector<model::Range> ranges; // NVTX ranges and markers (CUPTI tier)
  std::vector<model::DeviceSample> device_samples;
  std::vector<model::BlasCall> blas_calls;

  size_t size() const {
    return kernels.size() + copies.size() + memsets.size() + syncs.size() + api_calls.size() +
           allocations.size() + ranges.size() + device_samples.size() + blas_calls.size();
  }
  void clear() {
    kernels.clear();
    copies.clear();
    memsets.clear();
    syncs.clear();
    api_calls.clear();
    allocations.clear();
    ranges.clear();
    device_samples.clear();
    blas_calls.clear();
  }
  void append(const Records& o) {
    kernels.insert(kernels.end(), o.kernels.begin(), o.kernels.end());
    copies.insert(copies.end(), o.copies.begin(), o.copies.end());
    memsets.insert(memsets.end(), o.memsets.begin(), o.memsets.end());
    syncs.insert(syncs.end(), o.syncs.begin(), o.syncs.end());
    api_calls.insert(api_calls.end(), o.api_calls.begin(), o.api_calls.end());
    allocations.insert(allocations.end(), o.allocations.begin(), o.allocations.end());
    ranges.insert(ranges.end(), o.ranges.begin(), o.ranges.end());
    device_samples.insert(device_samples.end(), o.device_samples.begin(), o.device_samples.end());
    blas_calls.insert(blas_calls.end(), o.blas_calls.begin(), o.blas_calls.end());
  }
};

} // namespace gpuwise::interposer
