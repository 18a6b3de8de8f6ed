// How the advisor's heap serves its large, short-lived buffers. Each live window cut allocates and
// frees record and interval vectors of 10^5 to 10^6 entries (tens of MB); an import grows each
// trace's record vectors and frees them with the trace. By default glibc maps blocks above a
// threshold afresh and gives the top of the heap back once it exceeds twice that threshold, so
// every window and every imported file touched new pages (a page fault each 4 KiB, zeroed by
// the kernel): keeping them made the live ingest a quarter faster (advisor_ingest_bench,
// BM_RouteKernelBatches) and the Kineto folder import 1.25-1.5x (import_kineto_bench: 0.80 ->
// 1.00-1.22 GB per CPU-second, peak RSS 24 -> 27.6 MB). Blocks up to 64 MiB now come from the heap,
// and up to 128 MiB of free heap is kept for the next window or file: the advisor's resident memory
// stays near its peak instead of swinging at every cut (docs/performance.md: +35 MiB at the end of
// a 20 M-launch run).
//
// The advisor's process only (the live ingest, the importers): never the shim's, which runs in
// the application and leaves its heap alone.
#pragma once

namespace gpuwise::advisor {

// Once per process (any thread, any number of calls); a no-op where the allocator is not
// glibc's (a sanitizer's).
void tuneAdvisorHeap();

// tuneAdvisorHeap(), and every thread created after the call allocates from the main heap (one
// arena), so that the settings above reach the live advisor's threads: glibc gives each further
// thread an arena of its own, whose heaps it unmaps when they empty. The live ingest calls it
// before it starts its threads. Not for the importers: their parallel workers (one per rank
// trace) would contend for the one arena's lock.
void tuneLiveAdvisorHeap();

} // namespace gpuwise::advisor
