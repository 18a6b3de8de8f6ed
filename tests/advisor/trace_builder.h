// Hand-built traces for the advisor tests: short helpers so each test states its timeline in one
// line per record, with times in nanoseconds.
#pragma once

#include "profiler/model/trace.h"

#include <string>

namespace gpuwise::advisor::test {

inline model::KernelExec kernel(model::TimeNs start, model::TimeNs end, uint32_t stream = 7,
                                uint32_t device = 0, model::NameId name = 0) {
  model::KernelExec k;
  k.start = start;
  k.end = end;
  k.stream = stream;
  k.device = device;
  k.name = name;
  return k;
}

inline model::Copy copy(model::TimeNs start, model::TimeNs end, uint64_t bytes,
                        model::CopyDirection dir = model::CopyDirection::HostToDevice,
                        model::MemoryKind host = model::MemoryKind::Pageable, bool async = true,
                        uint32_t stream = 7, uint32_t device = 0) {
  model::Copy c;
  c.start = start;
  c.end = end;
  c.bytes = bytes;
  c.direction = dir;
  c.stream = stream;
  c.device = device;
  c.async = async;
  if (dir == model::CopyDirection::HostToDevice) {
    c.src = host;
    c.dst = model::MemoryKind::Device;
  } else if (dir == model::CopyDirection::DeviceToHost) {
    c.src = model::MemoryKind::Device;
    c.dst = host;
  } else {
    c.src = c.dst = model::MemoryKind::Device;
  }
  return c;
}

inline model::ProcessTrace process(int64_t pid, const std::string& gpu = "NVIDIA H100 80GB HBM3",
                                   model::CollectionTier tier = model::CollectionTier::Cupti) {
  model::ProcessTrace p;
  p.info.pid = pid;
  p.info.command = "python train.py";
  p.info.host = "node1";
  p.info.tier = tier;
  model::DeviceInfo d;
  d.index = 0;
  d.name = gpu;
  d.sm_count = 132;
  d.memory_total_bytes = 80ull << 30;
  d.compute_major = 9;
  d.compute_minor = 0;
  p.devices.push_back(d);
  return p;
}

inline model::Trace trace(model::ProcessTrace p) {
  model::Trace t;
  t.processes.push_back(std::move(p));
  return t;
}

constexpr model::TimeNs kMs = 1'000'000;
constexpr model::TimeNs kSec = 1'000'000'000;

} // namespace gpuwise::advisor::test
