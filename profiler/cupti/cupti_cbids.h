// The runtime and driver callback ids gpuwise asks CUPTI to record API activity for: exactly the
// calls that launch, copy, set or synchronise, so every GPU record's correlation id joins to the
// host call behind it (thread, start, end) at a fraction of the cost of tracing every API.
#pragma once

#include "profiler/cupti/api_class.h"

#include <cupti.h>

#include <span>

namespace gpuwise::profiler {

struct TracedCbid {
  CUpti_CallbackId cbid;
  ApiClass cls;
};

std::span<const TracedCbid> tracedRuntimeCbids();
std::span<const TracedCbid> tracedDriverCbids();
// The class of a RUNTIME (runtime=true) or DRIVER record's cbid; Other for ids not traced.
ApiClass classOfCbid(bool runtime, CUpti_CallbackId cbid);

} // namespace gpuwise::profiler
