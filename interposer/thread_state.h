// Per-thread state of the hooks, in initial-exec TLS so reaching it is one %fs-relative access
// (no __tls_get_addr call, no lazy TLS allocation) and costs nothing to threads that never record.
// A plain trivially-constructible struct declared with __thread: no TLS wrapper, no initializer.
//
// Threads: each thread touches only its own. The drain thread and threads the shim creates set
// `internal` so nothing they call is recorded.
#pragma once

#include <cstdint>

namespace gpuwise::interposer {

struct RingSlot;

struct ThreadState {
  RingSlot* ring;         // claimed on the first recorded event; null before and after thread exit
  uint32_t tid;           // gettid(), cached at claim
  uint32_t device;        // current device as set through cudaSetDevice (0 until then)
  uint32_t claim_backoff; // events to drop before trying to claim again after the pool ran dry
  uint8_t in_hook;        // inside a hooked call: nested CUDA calls are not recorded
  uint8_t internal;       // a thread of the shim's own: never record
  uint8_t exited;         // its ring was released at thread exit: drop, do not claim again
};

extern __thread ThreadState t_state __attribute__((tls_model("initial-exec")));

} // namespace gpuwise::interposer
