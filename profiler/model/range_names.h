// What a range's name says it is, for every source of named ranges: NVTX ranges recorded by CUPTI
// (profiler/cupti) and those in an Nsight Systems export (advisor/import). Pure text, no state.
#pragma once

#include "profiler/model/events.h"

#include <cstdint>
#include <string_view>

namespace gpuwise::model {

// What an NVTX range's name says it is: "ProfilerStep#12", "step 3", "train_step", "iteration_7"
// are steps (with their number in *step when the name has one, else -1); "enumerate(DataLoader)..."
// is the data loader; "aten::..." (torch.autograd.profiler.emit_nvtx) an operator; anything else
// a user annotation.
RangeKind nvtxRangeKind(std::string_view name, int64_t* step);

} // namespace gpuwise::model
