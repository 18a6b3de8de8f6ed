// Turns the raw events of the rings into model records: ticks to CLOCK_MONOTONIC ns, function
// pointers to interned kernel names, stream handles to small stream ids, host sides of copies to
// pinned/pageable, and frees to the size that was allocated.
//
// Threads: the drain thread only (it owns the NameTable and every cache here).
#pragma once

#include "interposer/kernel_registry.h"
#include "interposer/raw_event.h"
#include "interposer/records.h"
#include "profiler/clock/clock.h"
#include "profiler/model/name_table.h"

#include <functional>
#include <string>
#include <unordered_map>

namespace gpuwise::interposer {

class EventConverter {
public:
  // Names a kernel the registry does not know (cuFuncGetName for CUfunctions, cuKernelGetName for
  // kernel handles...); may be empty. Called on the drain thread.
  using NameResolver = std::function<std::string(const void* func, FuncKind kind)>;

  EventConverter(const profiler::Clock& clock, model::NameTable& names,
                 const KernelRegistry& kernels, NameResolver resolver = {});

  // Appends the records `e` stands for. `tid` is the OS thread that recorded it.
  void convert(const RawEvent& e, uint32_t tid, Records& out);

  uint32_t streamId(uint64_t handle, uint32_t tid);
  model::NameId kernelName(const void* func, FuncKind kind);
  model::NameId apiName(ApiId id);

  static constexpr size_t kMaxTrackedAllocations = 1 << 20;

private:
  int64_t ns(uint64_t ticks) const { return clock_.toNs(ticks); }
  model::Collective collective(const RawEvent& e, uint32_t tid, int64_t start, int64_t end);

  const profiler::Clock& clock_;
  model::NameTable& names_;
  const KernelRegistry& kernels_;
  NameResolver resolver_;
  struct CachedName {
    model::NameId id;
    uint64_t generation; // registry generation when the lookup failed; ~0 when found
  };
  std::unordered_map<const void*, CachedName> kernel_names_;
  std::unordered_map<uint64_t, uint32_t> streams_;
  uint32_t next_stream_ = 1;
  model::NameId api_names_[size_t(ApiId::Count)] = {};
  std::unordered_map<uint64_t, uint64_t> allocation_bytes_;
};

} // namespace gpuwise::interposer
