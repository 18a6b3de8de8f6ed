// How the advisor's heap serves window analysis. Each window cut allocates and frees record and
// interval vectors of 10^5 to 10^6 entries (tens of MB). By default glibc maps blocks above a
// threshold afresh and gives the top of the heap back once it exceeds twice that threshold, so
// every window touched new pages: keeping them made the live ingest a quarter faster
// (advisor_ingest_bench, BM_RouteKernelBatches). Blocks up to 64 MiB now come from the heap, and
// up to 128 MiB of free heap is kept for the next window: the advisor's resident memory stays near
// its peak instead of swinging by a window at every cut (docs/performance.md: +35 MiB at the end of
// a 20 M-launch run).
#pragma once

namespace gpuwise::advisor {

// Once per process (any thread, any number of calls); a no-op where the allocator is not
// glibc's (a sanitizer's).
void tuneHeapForWindows();

} // namespace gpuwise::advisor
