#include "advisor/cost/board_power.h"

#include "advisor/gpu/gpu_classes.h"

namespace gpuwise::advisor {

std::optional<BoardPower> boardPowerOf(std::string_view name, uint64_t memory_total_bytes) {
  const GpuClass* c = findGpuClass(name, memory_total_bytes);
  if (!c || c->board_power_w <= 0) return std::nullopt;
  return BoardPower{c->name, c->board_power_w};
}

} // namespace gpuwise::advisor
