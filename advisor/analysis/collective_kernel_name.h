// What a collective kernel's name says about its collective: NCCL and RCCL name their kernels by
// the operation, and from NCCL 2.19 (ncclDevKernel_*) or before it (ncclKernel_*) also by the
// reduction, element type, algorithm and protocol:
//
//   ncclDevKernel_AllReduce_Sum_f32_RING_LL(...)       kind, reduction, type, algorithm, protocol
//   ncclKernel_AllReduce_RING_LL_Sum_float(...)        kind, algorithm, protocol, reduction, type
//   ncclDevKernel_AllGather_RING_LL(...)               kind, algorithm, protocol
//   ncclDevKernel_SendRecv(...), ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(...)
//   ncclDevKernel_Generic(...), rcclGenericKernel(...)  a collective of unknown kind
//
// SendRecv kernels carry point-to-point traffic (send, recv, and the all-to-all PyTorch builds from
// them): kind Send unless a model::Collective record says otherwise. The type in the name is the
// kernel's instantiation: for SendRecv (int8, a byte copy) it is not the tensor's, so it is left
// Unknown there.
//
// Pure; any thread.
#pragma once

#include "profiler/model/events.h"

#include <string_view>

namespace gpuwise::advisor {

struct CollectiveKernelName {
  bool collective = false; // an NCCL / RCCL kernel at all
  model::CollectiveKind kind = model::CollectiveKind::Unknown;
  model::ElementType element = model::ElementType::Unknown;
  std::string_view algorithm; // "ring", "tree", "collnet_direct", "collnet_chain", "nvls",
                              // "nvls_tree", "pat"; empty when the name does not say
  std::string_view protocol;  // "ll", "ll128", "simple"; empty when the name does not say
};

CollectiveKernelName parseCollectiveKernelName(std::string_view name);

} // namespace gpuwise::advisor
