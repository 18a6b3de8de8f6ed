// The report's `gpu_types` section: every GPU class of the table for this job (gpu_type_choice.h),
// what right_size_gpu_type chose from, and the HTML report's "GPU classes" table.
//
//   gpu_types  {current, skipped, step_basis, step_seconds, peak_memory_gb, memory_needed_gb,
//               memory_headroom, max_slowdown, gpus, multi_rank, chosen,
//               classes[]: {gpu, memory_gb, hbm_gb_per_s, fp32_tflops, tf32_tensor_tflops,
//                           bf16_tensor_tflops, fp8_tensor_tflops, sm_count, board_power_w,
//                           usd_per_hour, predicted_step_seconds, predicted_slowdown,
//                           predicted_busy_scale,
//                           cost_per_step, memory_fits, current, eligible, reason}}
// Unknown figures are null; with the job's GPU not in the table, classes is empty and skipped says
// why.
//
// Pure; any thread.
#pragma once

#include "advisor/gpu/gpu_type_choice.h"

#include <nlohmann/json.hpp>

namespace gpuwise::advisor {

nlohmann::ordered_json gpuTypesJson(const GpuTypeComparison& comparison);

} // namespace gpuwise::advisor
