#include "advisor/import/heap_tuning.h"

#include <mutex>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace gpuwise::advisor {

void tuneAdvisorHeap() {
#if defined(__GLIBC__)
  static std::once_flag once;
  std::call_once(once, [] {
    // Setting either also stops glibc's own adjustment of both, which is what let the threshold
    // climb only to the size of the last freed block.
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 128 << 20);
  });
#endif
}

void tuneLiveAdvisorHeap() {
  tuneAdvisorHeap();
#if defined(__GLIBC__)
  // A thread of its own arena allocates from 64 MiB heaps, and glibc unmaps such a heap as soon
  // as it is all free, whatever the trim threshold: the live ingest thread's window working set
  // spills past its first heap, so every window faulted its vectors in afresh (BM_IngestProcesses
  // /1: 28,300 page faults against 14,300-15,200 with one arena). Small blocks still come from
  // each thread's cache (tcache), without the arena's lock.
  mallopt(M_ARENA_MAX, 1);
#endif
}

} // namespace gpuwise::advisor
