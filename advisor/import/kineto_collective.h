// The collective a Kineto event's args describe: PyTorch's record_param_comms operator and, from
// PyTorch 2.6, the collective kernel itself carry "Collective name", "In msg nelems",
// "Out msg nelems", "Group size", "dtype" and "Process Group Name". Maps PyTorch's names to
// model::CollectiveKind and model::ElementType.
//
// Pure; any thread.
#pragma once

#include "advisor/import/kineto_event.h"
#include "profiler/model/events.h"

#include <optional>
#include <string_view>

namespace gpuwise::advisor {

// "allreduce", "_allgather_base", "all_gather_into_tensor", "reduce_scatter_tensor",
// "alltoall_base", "send", "recv", "barrier", ... -> kind; Unknown for names it does not know.
model::CollectiveKind collectiveKindFromPyTorch(std::string_view name);
// "Float", "BFloat16", "Half", "c10::BFloat16", "float", "Long", ... -> element type.
model::ElementType elementTypeFromPyTorch(std::string_view dtype);

// The collective of an event with a "Collective name" (host times from the event; correlation
// left 0 for the caller to join); nullopt without one.
std::optional<model::Collective> collectiveFromArgs(const KinetoEvent& e, const KinetoArgs& a);

} // namespace gpuwise::advisor
