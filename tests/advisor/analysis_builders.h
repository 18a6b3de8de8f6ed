// Builders for the analysis-engine tests: GPU records joined to the host call that launched them,
// in the two shapes the sources give (Kineto: an ApiCall per launch plus the interval on the
// record; live: the interval on the record only), so a test can state "launched at t on thread
// T, ran [s, e)" in one line. Times in nanoseconds.
#pragma once

#include "tests/advisor/trace_builder.h"

#include <string>

namespace gpuwise::advisor::test {

inline constexpr uint32_t kMainThread = 11;

// A kernel named `name` (interned in p), launched by a call [ls, le] on `thread`, run [s, e).
inline model::KernelExec launched(model::ProcessTrace& p, const std::string& name, model::TimeNs ls,
                                  model::TimeNs le, model::TimeNs s, model::TimeNs e,
                                  uint32_t thread = kMainThread, uint32_t stream = 7) {
  model::KernelExec k = kernel(s, e, stream, 0, p.names.intern(name));
  k.launch_start = ls;
  k.launch_end = le;
  k.thread = thread;
  return k;
}

// A host-to-device copy issued by a call [cs, ce] on `thread`, run [s, e).
inline model::Copy h2d(model::TimeNs cs, model::TimeNs ce, model::TimeNs s, model::TimeNs e,
                       uint32_t thread = kMainThread, bool async = true) {
  model::Copy c =
      copy(s, e, 1 << 20, model::CopyDirection::HostToDevice, model::MemoryKind::Pinned, async);
  c.call_start = cs;
  c.call_end = ce;
  c.thread = thread;
  return c;
}

inline model::HostSync hostSync(model::TimeNs s, model::TimeNs e, uint32_t thread = kMainThread,
                                model::SyncKind kind = model::SyncKind::Device) {
  return {.start = s, .end = e, .thread = thread, .kind = kind};
}

inline model::Range range(model::ProcessTrace& p, model::RangeKind kind, const std::string& name,
                          model::TimeNs s, model::TimeNs e, int64_t step = -1,
                          uint32_t thread = kMainThread) {
  return {.start = s,
          .end = e,
          .name = p.names.intern(name),
          .thread = thread,
          .kind = kind,
          .step = step};
}

// The Kineto shape of a live trace: every launch and copy call also listed as an ApiCall.
inline void addApiCalls(model::ProcessTrace& p) {
  for (const auto& k : p.kernels)
    if (k.launch_start)
      p.api_calls.push_back({.start = k.launch_start,
                             .end = k.launch_end,
                             .name = p.names.intern("cudaLaunchKernel"),
                             .thread = k.thread});
  for (const auto& c : p.copies)
    if (c.call_start)
      p.api_calls.push_back({.start = c.call_start,
                             .end = c.call_end,
                             .name = p.names.intern("cudaMemcpyAsync"),
                             .thread = c.thread});
}

} // namespace gpuwise::advisor::test
