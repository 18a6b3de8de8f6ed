// Joins an imported process's GPU records to the host API calls that issued them, by CUPTI
// correlation id, for the importers whose sources list both (Kineto, Nsight Systems exports):
// kernels get their launch call's times and thread, copies and memsets their call's times, thread
// and whether it was an *Async call. Synchronising calls become HostSyncs; the sources' own
// synchronisation records (Kineto cuda_sync, CUPTI SYNCHRONIZATION rows) name the stream and
// device of a call already there, or stand as waits of their own.
//
// Runs once, after every record of the process has been read (the order in a file is free).
#pragma once

#include "profiler/model/trace.h"

#include <vector>

namespace gpuwise::advisor {

// When a synchronisation record shares its correlation id with a synchronising call, it is the
// same wait if the kinds agree (SameKind: Kineto's cuda_sync names the kind the call has), or
// whatever the record says (AnyKind: Nsight Systems 2022 exports label cudaDeviceSynchronize an
// event sync; the call's name is the truth and the wait is counted once).
enum class SyncRecordMerge { SameKind, AnyKind };

// `sync_records`: the source's synchronisation records; a record's thread, when not 0, is kept
// where no call joins it. Appends to t.syncs.
void joinApiCalls(model::ProcessTrace& t, std::vector<model::HostSync> sync_records,
                  SyncRecordMerge merge);

} // namespace gpuwise::advisor
