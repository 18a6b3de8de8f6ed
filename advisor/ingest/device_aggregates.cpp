#include "advisor/ingest/device_aggregates.h"

#include <algorithm>

namespace gpuwise::advisor {

std::optional<uint64_t> DeviceAggregate::memoryUsedBytes() const {
  if (reserved_time) return uint64_t(std::max<int64_t>(reserved_bytes, 0));
  if (!any_allocation) return std::nullopt;
  return uint64_t(std::max<int64_t>(net_allocated_bytes, 0));
}

void DeviceAggregates::merge(const DeviceAggregates& later) {
  for (const auto& [device, l] : later.devices) {
    auto& d = devices[device];
    if (split || later.split) {
      d.kernels.merge(l.kernels);
      d.copies.merge(l.copies);
    }
    if (l.reserved_time && (!d.reserved_time || *l.reserved_time >= *d.reserved_time)) {
      d.reserved_time = l.reserved_time;
      d.reserved_bytes = l.reserved_bytes;
    }
    d.any_allocation = d.any_allocation || l.any_allocation;
    d.net_allocated_bytes += l.net_allocated_bytes;
  }
  split = split || later.split;
}

void DeviceAggregates::promote(const KernelResult& kernels, const CopyResult& copies) {
  if (split) return;
  split = true;
  // At most one device so far: the process's results are its.
  if (devices.size() == 1) {
    devices.begin()->second.kernels = kernels;
    devices.begin()->second.copies = copies;
  }
}

DeviceAggregates aggregateDevices(model::ProcessTrace& p, const DeviceAggregates& before) {
  DeviceAggregates r;
  std::set<uint32_t> used = p.activeDevices();
  for (uint32_t d : used)
    r.devices[d];
  for (const auto& [d, _] : before.devices)
    used.insert(d);
  r.split = before.split || used.size() > 1;
  const bool split = r.split;
  for (const auto& s : p.memory_samples) {
    if (s.reserved_bytes < 0) continue;
    auto& d = r.devices[s.device];
    if (!d.reserved_time || s.time >= *d.reserved_time) {
      d.reserved_time = s.time;
      d.reserved_bytes = s.reserved_bytes;
    }
  }
  for (const auto& a : p.allocations) {
    if (a.kind != model::MemoryKind::Device) continue;
    auto& d = r.devices[a.device];
    d.any_allocation = true;
    d.net_allocated_bytes += a.is_free ? -int64_t(a.bytes) : int64_t(a.bytes);
  }
  if (!split) return r;
  // Only the device records are filtered: the kernel and copy analyzers read nothing else but the
  // process's identity, devices and names.
  model::Trace one;
  one.processes.emplace_back();
  auto& q = one.processes.back();
  q.info = p.info;
  q.devices = p.devices;
  q.names = std::move(p.names);
  for (auto& [device, agg] : r.devices) {
    q.kernels.clear();
    q.copies.clear();
    for (const auto& k : p.kernels)
      if (k.device == device) q.kernels.push_back(k);
    for (const auto& c : p.copies)
      if (c.device == device) q.copies.push_back(c);
    agg.kernels = analyzeKernels(one);
    agg.copies = analyzeCopies(one);
  }
  p.names = std::move(q.names);
  return r;
}

} // namespace gpuwise::advisor
