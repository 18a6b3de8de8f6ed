#include "advisor/cost/gpu_prices.h"

#include "advisor/gpu/gpu_classes.h"

#include <array>

namespace gpuwise::advisor {
namespace {

// USD per GPU-hour, on-demand list-price estimates (see the header), held by the GPU class table
// (advisor/gpu/gpu_classes.cpp). Where a model is sold in 8-GPU instances the figure is the
// instance price / 8; L4, A10G and V100 also come one per instance (g6.xlarge, g5.xlarge,
// p3.2xlarge class). Classes that share a price row (the H100 SXM, NVL and PCIe: "H100") give
// it once.
constexpr size_t kMaxRows = 16;

struct PriceRows {
  std::array<GpuPrice, kMaxRows> rows{};
  size_t count = 0;
};

PriceRows buildRows() {
  PriceRows out;
  for (const auto& c : gpuClassTable()) {
    if (!c.price_model) continue;
    bool seen = false;
    for (size_t i = 0; i < out.count; ++i)
      seen = seen || out.rows[i].model == c.price_model;
    if (!seen && out.count < kMaxRows) out.rows[out.count++] = {c.price_model, c.usd_per_hour};
  }
  return out;
}

const PriceRows& priceRows() {
  static const PriceRows rows = buildRows();
  return rows;
}

} // namespace

std::span<const GpuPrice> gpuPriceTable() {
  const auto& p = priceRows();
  return {p.rows.data(), p.count};
}

std::optional<GpuPrice> lookupGpuPrice(std::string_view name, uint64_t memory_total_bytes) {
  const GpuClass* c = findGpuClass(name, memory_total_bytes);
  if (!c || !c->price_model) return std::nullopt;
  return GpuPrice{c->price_model, c->usd_per_hour};
}

} // namespace gpuwise::advisor
