#include "advisor/analysis/collective_kernel_name.h"

#include <array>
#include <utility>

namespace gpuwise::advisor {
namespace {

using model::CollectiveKind;
using model::ElementType;

bool startsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

constexpr std::array<std::pair<std::string_view, CollectiveKind>, 9> kKinds{{
    {"AllReduce", CollectiveKind::AllReduce},
    {"AllGather", CollectiveKind::AllGather},
    {"ReduceScatter", CollectiveKind::ReduceScatter},
    {"Broadcast", CollectiveKind::Broadcast},
    {"Reduce", CollectiveKind::Reduce},
    {"AllToAll", CollectiveKind::AllToAll},
    {"SendRecv", CollectiveKind::Send},
    {"Send", CollectiveKind::Send},
    {"Recv", CollectiveKind::Recv},
}};

// Both generations' spellings: NCCL >= 2.19 writes f32/bf16/u8, older kernels the C type.
constexpr std::array<std::pair<std::string_view, ElementType>, 22> kTypes{{
    {"i8", ElementType::Int8},           {"int8_t", ElementType::Int8},
    {"u8", ElementType::Uint8},          {"uint8_t", ElementType::Uint8},
    {"i32", ElementType::Int32},         {"int32_t", ElementType::Int32},
    {"u32", ElementType::Uint32},        {"uint32_t", ElementType::Uint32},
    {"i64", ElementType::Int64},         {"int64_t", ElementType::Int64},
    {"u64", ElementType::Uint64},        {"uint64_t", ElementType::Uint64},
    {"f16", ElementType::Float16},       {"half", ElementType::Float16},
    {"f32", ElementType::Float32},       {"float", ElementType::Float32},
    {"f64", ElementType::Float64},       {"double", ElementType::Float64},
    {"bf16", ElementType::BFloat16},     {"__nv_bfloat16", ElementType::BFloat16},
    {"f8e4m3", ElementType::Float8E4M3}, {"f8e5m2", ElementType::Float8E5M2},
}};

constexpr std::array<std::pair<std::string_view, std::string_view>, 7> kAlgorithms{{
    {"RING", "ring"},
    {"TREE", "tree"},
    {"COLLNET", "collnet_direct"},
    {"COLLNETDIRECT", "collnet_direct"},
    {"COLLNETCHAIN", "collnet_chain"},
    {"NVLS", "nvls"},
    {"PAT", "pat"},
}};

constexpr std::array<std::pair<std::string_view, std::string_view>, 3> kProtocols{{
    {"LL", "ll"},
    {"LL128", "ll128"},
    {"SIMPLE", "simple"},
}};

template <typename Table, typename Value>
bool lookUp(const Table& table, std::string_view token, Value* out) {
  for (const auto& [spelling, value] : table)
    if (spelling == token) {
      *out = value;
      return true;
    }
  return false;
}

// The name without "void ", its parameter list and template arguments.
std::string_view bareName(std::string_view name) {
  if (startsWith(name, "void ")) name.remove_prefix(5);
  const size_t end = name.find_first_of("(<");
  return end == std::string_view::npos ? name : name.substr(0, end);
}

} // namespace

CollectiveKernelName parseCollectiveKernelName(std::string_view name) {
  CollectiveKernelName out;
  name = bareName(name);
  if (!startsWith(name, "nccl") && !startsWith(name, "rccl")) return out;
  out.collective = true;
  // "ncclKernel" / "ncclDevKernel" / "rcclGenericKernel": the tokens after the first '_'.
  size_t pos = name.find('_');
  while (pos != std::string_view::npos) {
    const size_t next = name.find('_', pos + 1);
    const std::string_view token = name.substr(
        pos + 1, next == std::string_view::npos ? std::string_view::npos : next - pos - 1);
    pos = next;
    if (out.kind == CollectiveKind::Unknown && lookUp(kKinds, token, &out.kind)) continue;
    if (out.algorithm.empty() && lookUp(kAlgorithms, token, &out.algorithm)) {
      // NVLS_TREE / COLLNET_DIRECT / COLLNET_CHAIN are two tokens.
      const std::string_view rest = pos == std::string_view::npos ? "" : name.substr(pos + 1);
      if (out.algorithm == "nvls" && startsWith(rest, "TREE")) out.algorithm = "nvls_tree";
      if (out.algorithm == "collnet_direct" && startsWith(rest, "CHAIN"))
        out.algorithm = "collnet_chain";
      continue;
    }
    if (out.protocol.empty() && lookUp(kProtocols, token, &out.protocol)) continue;
    // "int8_t" and "uint8_t" hold a '_': try the token with the one after it too.
    if (out.element == ElementType::Unknown && token.size() < 8 && pos != std::string_view::npos) {
      const size_t after = name.find('_', pos + 1);
      const std::string_view joined =
          name.substr(pos - token.size(), (after == std::string_view::npos ? name.size() : after) -
                                              (pos - token.size()));
      if (lookUp(kTypes, joined, &out.element)) {
        pos = after;
        continue;
      }
    }
    if (out.element == ElementType::Unknown) lookUp(kTypes, token, &out.element);
  }
  // A SendRecv kernel is a byte copy whatever the tensor's type.
  if (out.kind == CollectiveKind::Send) out.element = ElementType::Unknown;
  return out;
}

} // namespace gpuwise::advisor
