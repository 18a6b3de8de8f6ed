// Captured CUDA graphs (internal to the simulator). A graph is the list of operations a stream
// capture recorded, in capture order; an executable graph is a frozen copy that cudaGraphLaunch
// replays onto a stream as graph-node kernels, copies and memsets (CUPTI graphId/graphNodeId set).
// Guarded by the simulator's mutex.
#pragma once

#include <cstdint>
#include <vector>

#include "tests/simdevice/core/cost_model.h"
#include "tests/simdevice/core/kernel_registry.h"
#include "tests/simdevice/core/simulator.h"

namespace gpuwise::sim {

struct GraphNode {
  enum class Type : uint8_t { Kernel, Copy, Memset };
  Type type = Type::Kernel;
  uint64_t id = 0;
  // Kernel nodes.
  KernelInfo kernel;
  KernelShape shape;
  bool cooperative = false;
  // Copy nodes (pointers as captured; the bytes move when the graph runs).
  CopyRequest copy;
  // Memset nodes.
  void* memset_ptr = nullptr;
  int memset_value = 0;
  size_t memset_bytes = 0;
  bool memset_managed = false;
};

struct GraphState {
  uint32_t id = 0;      // CUPTI graph id (cuptiGetGraphId); an exec carries its graph's id
  uint32_t exec_id = 0; // nonzero for an executable graph
  int device = 0;
  bool destroyed = false;
  std::vector<GraphNode> nodes;
};

} // namespace gpuwise::sim
