#include "advisor/analysis/precision_analyzer.h"

#include <algorithm>

namespace gpuwise::advisor {
namespace {

std::optional<double> shareOf(model::TimeNs part, model::TimeNs whole) {
  if (whole <= 0) return std::nullopt;
  return double(part) / double(whole);
}

} // namespace

std::optional<double> PrecisionResult::share(profiler::Precision p) const {
  return shareOf(at(p), kernel_ns);
}
std::optional<double> PrecisionResult::tensorCoreShare() const {
  return shareOf(tensor_core_ns, kernel_ns);
}
std::optional<double> PrecisionResult::fp32MatmulShare() const {
  return shareOf(fp32_matmul_ns, kernel_ns);
}
std::optional<double> PrecisionResult::fp32MatmulShareOfFp32() const {
  return shareOf(fp32_matmul_ns, at(profiler::Precision::Fp32));
}

PrecisionResult analyzePrecision(const KernelResult& kernels) {
  PrecisionResult r;
  for (const auto& s : kernels.by_name) {
    const auto& c = s.kernel_class;
    r.kernel_ns += s.total_ns;
    r.ns[static_cast<size_t>(c.precision)] += s.total_ns;
    if (c.tensor_core) r.tensor_core_ns += s.total_ns;
    if (c.precision == profiler::Precision::Fp32 && !c.tensor_core && s.matmul_like)
      r.fp32_matmul_ns += s.total_ns;
    if (!c.known) {
      ++r.unknown_names;
      r.unknown_ns += s.total_ns;
      if (r.unknown.size() < PrecisionResult::kMaxUnknownListed)
        r.unknown.push_back({s.display_name, s.count, s.total_ns}); // by_name is by time already
    }
  }
  return r;
}

} // namespace gpuwise::advisor
