// How the advisor's heap serves window analysis. Each window cut allocates and frees record and
// interval vectors of 10^5 to 10^6 entries (tens of MB). By default glibc maps blocks above a
// threshold afresh and gives the top of the heap back once it exceeds twice that threshold, so
// every window touched new pages: the kernel's page faults and zeroing were a quarter of the live
// ingest's time (advisor_ingest_bench, BM_RouteKernelBatches). Blocks up to 64 MiB now come from
// the heap, and up to 128 MiB of free heap is kept for the next window: the advisor's resident
// memory stays near its peak instead of swinging by a window at every cut.
#pragma once

namespace gpuwise::advisor {

// Once per process (any thread, any number of calls); a no-op where the allocator is not
// glibc's (a sanitizer's).
void tuneHeapForWindows();

} // namespace gpuwise::advisor
