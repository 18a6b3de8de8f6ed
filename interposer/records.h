// A bag of model records on their way from the rings and CUPTI to the next batch (the one list of
// record kinds: model::RecordSet). Drain thread only.
#pragma once

#include "profiler/model/record_set.h"

namespace gpuwise::interposer {

struct Records : model::RecordSet {};

} // namespace gpuwise::interposer
