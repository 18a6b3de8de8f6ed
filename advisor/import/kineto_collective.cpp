#include "advisor/import/kineto_collective.h"

#include <array>
#include <cctype>
#include <climits>
#include <functional>
#include <string>
#include <utility>

namespace gpuwise::advisor {
namespace {

using model::CollectiveKind;
using model::ElementType;

// Lower case, without '_' and a "c10::" / "torch." prefix: "_allgather_base" -> "allgatherbase".
std::string folded(std::string_view s) {
  for (std::string_view prefix : {"c10::", "torch."})
    if (s.substr(0, prefix.size()) == prefix) s.remove_prefix(prefix.size());
  std::string out;
  for (char c : s)
    if (c != '_') out += char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool startsWith(const std::string& s, std::string_view prefix) {
  return std::string_view(s).substr(0, prefix.size()) == prefix;
}

} // namespace

CollectiveKind collectiveKindFromPyTorch(std::string_view name) {
  const std::string n = folded(name);
  // "reducescatter" before "reduce".
  static constexpr std::array<std::pair<std::string_view, CollectiveKind>, 9> kPrefixes{{
      {"allreduce", CollectiveKind::AllReduce},
      {"allgather", CollectiveKind::AllGather},
      {"reducescatter", CollectiveKind::ReduceScatter},
      {"alltoall", CollectiveKind::AllToAll},
      {"broadcast", CollectiveKind::Broadcast},
      {"reduce", CollectiveKind::Reduce},
      {"send", CollectiveKind::Send},
      {"recv", CollectiveKind::Recv},
      {"barrier", CollectiveKind::Barrier},
  }};
  for (const auto& [prefix, kind] : kPrefixes)
    if (startsWith(n, prefix)) return kind;
  return CollectiveKind::Unknown;
}

ElementType elementTypeFromPyTorch(std::string_view dtype) {
  static constexpr std::array<std::pair<std::string_view, ElementType>, 20> kTypes{{
      {"float", ElementType::Float32},
      {"float32", ElementType::Float32},
      {"double", ElementType::Float64},
      {"float64", ElementType::Float64},
      {"half", ElementType::Float16},
      {"float16", ElementType::Float16},
      {"bfloat16", ElementType::BFloat16},
      {"char", ElementType::Int8},
      {"int8", ElementType::Int8},
      {"byte", ElementType::Uint8},
      {"uint8", ElementType::Uint8},
      {"bool", ElementType::Uint8},
      {"int", ElementType::Int32},
      {"int32", ElementType::Int32},
      {"long", ElementType::Int64},
      {"int64", ElementType::Int64},
      {"float8e4m3fn", ElementType::Float8E4M3},
      {"float8e4m3", ElementType::Float8E4M3},
      {"float8e5m2", ElementType::Float8E5M2},
      {"uint32", ElementType::Uint32},
  }};
  const std::string n = folded(dtype);
  for (const auto& [spelling, type] : kTypes)
    if (n == spelling) return type;
  return ElementType::Unknown;
}

std::optional<model::Collective> collectiveFromArgs(const KinetoEvent& e, const KinetoArgs& a) {
  if (a.collective_name.empty()) return std::nullopt;
  model::Collective c;
  c.start = e.ts;
  c.end = e.has_dur ? e.ts + e.dur : e.ts;
  c.kind = collectiveKindFromPyTorch(a.collective_name);
  c.element = elementTypeFromPyTorch(a.dtype);
  c.in_count = a.in_nelems > 0 ? uint64_t(a.in_nelems) : 0;
  c.out_count = a.out_nelems > 0 ? uint64_t(a.out_nelems) : 0;
  if (a.group_size > 0 && a.group_size <= INT32_MAX) c.group_size = int32_t(a.group_size);
  // The process group's name ("0", "3", a hash) as the communicator's id.
  if (!a.process_group.empty()) c.communicator = std::hash<std::string_view>{}(a.process_group) | 1;
  return c;
}

} // namespace gpuwise::advisor
