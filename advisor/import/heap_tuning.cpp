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

} // namespace gpuwise::advisor
