#include "advisor/analysis/blas_precision_analyzer.h"

#include "advisor/precision/demangle.h"
#include "advisor/precision/kernel_classifier.h"

#include <algorithm>
#include <unordered_map>

namespace gpuwise::advisor {
namespace {

using profiler::Precision;

// cudaDataType_t values (library_types.h).
enum DataType : int32_t {
  kR32F = 0,
  kR64F = 1,
  kR16F = 2,
  kR8I = 3,
  kR16BF = 14,
  kR8F_E4M3 = 28,
  kR8F_E5M2 = 29,
  kR4F_E2M1 = 33,
  kR32I = 10,
};
// cublasComputeType_t values (cublas_api.h).
enum ComputeType : int32_t {
  k16F = 64,
  k16FPedantic = 65,
  k32F = 68,
  k32FPedantic = 69,
  k64F = 70,
  k64FPedantic = 71,
  k32I = 72,
  k32IPedantic = 73,
  k32FFast16F = 74,
  k32FFast16BF = 75,
  k32FFastTF32 = 77,
};
constexpr int32_t kTf32TensorOpMath = 3; // CUBLAS_TF32_TENSOR_OP_MATH

std::string typeName(int32_t t) {
  switch (t) {
  case kR32F: return "fp32";
  case kR64F: return "fp64";
  case kR16F: return "fp16";
  case kR16BF: return "bf16";
  case kR8I: return "int8";
  case kR32I: return "int32";
  case kR8F_E4M3: return "fp8e4m3";
  case kR8F_E5M2: return "fp8e5m2";
  case kR4F_E2M1: return "fp4e2m1";
  case -1: return "?";
  default: return std::to_string(t);
  }
}

std::string computeName(int32_t c) {
  switch (c) {
  case k16F: return "16F";
  case k16FPedantic: return "16F_PEDANTIC";
  case k32F: return "32F";
  case k32FPedantic: return "32F_PEDANTIC";
  case k64F: return "64F";
  case k64FPedantic: return "64F_PEDANTIC";
  case k32I: return "32I";
  case k32IPedantic: return "32I_PEDANTIC";
  case k32FFast16F: return "32F_FAST_16F";
  case k32FFast16BF: return "32F_FAST_16BF";
  case k32FFastTF32: return "32F_FAST_TF32";
  case -1: return "?";
  default: return std::to_string(c);
  }
}

std::string mathName(int32_t m) {
  if (m < 0) return "default";
  switch (m & 0xf) {
  case 0: return "default";
  case 1: return "TENSOR_OP";
  case 2: return "PEDANTIC";
  case 3: return "TF32_TENSOR_OP";
  default: return std::to_string(m);
  }
}

struct Launch {
  model::TimeNs launch_start;
  size_t index;
};

} // namespace

std::optional<Precision> requestedPrecision(const model::BlasCall& c) {
  switch (c.a_type) {
  case kR16F: return Precision::Fp16;
  case kR16BF: return Precision::Bf16;
  case kR64F: return Precision::Fp64;
  case kR8I: return Precision::Int8;
  case kR8F_E4M3:
  case kR8F_E5M2: return Precision::Fp8;
  case kR4F_E2M1: return Precision::Fp4;
  case kR32F: break;
  default: return std::nullopt;
  }
  switch (c.compute_type) {
  case k32FFastTF32: return Precision::Tf32;
  case k32FFast16F: return Precision::Fp16;
  case k32FFast16BF: return Precision::Bf16;
  case k64F:
  case k64FPedantic: return Precision::Fp64;
  case k32F:
    return c.math_mode >= 0 && (c.math_mode & 0xf) == kTf32TensorOpMath ? Precision::Tf32
                                                                        : Precision::Fp32;
  case k32FPedantic: return Precision::Fp32;
  default: return std::nullopt;
  }
}

std::string describeTypes(const model::BlasCall& c) {
  std::string s = "A=" + typeName(c.a_type) + " B=" + typeName(c.b_type) +
                  " C=" + typeName(c.c_type) + " compute=" + computeName(c.compute_type);
  if (c.api != model::BlasApi::LtMatmul)
    s += " math=" + mathName(c.math_mode);
  else if (c.scale_type >= 0)
    s += " scale=" + typeName(c.scale_type);
  return s;
}

BlasPrecisionResult analyzeBlasPrecision(const model::Trace& trace) {
  BlasPrecisionResult r;
  std::vector<BlasKernelMatch> all;
  for (const auto& p : trace.processes) {
    if (p.blas_calls.empty()) continue;
    // Launches per thread, by launch time.
    std::unordered_map<uint32_t, std::vector<Launch>> by_thread;
    for (size_t i = 0; i < p.kernels.size(); ++i) {
      const auto& k = p.kernels[i];
      if (k.launch_start != 0 && k.thread != 0) by_thread[k.thread].push_back({k.launch_start, i});
    }
    for (auto& [tid, v] : by_thread)
      std::sort(v.begin(), v.end(),
                [](const Launch& a, const Launch& b) { return a.launch_start < b.launch_start; });
    std::unordered_map<model::NameId, std::pair<std::string, profiler::KernelClass>> classes;
    auto classOf = [&](model::NameId id) -> const std::pair<std::string, profiler::KernelClass>& {
      auto it = classes.find(id);
      if (it != classes.end()) return it->second;
      std::string display = profiler::demangle(p.names.get(id));
      auto kc = profiler::classifyKernel(display);
      return classes.emplace(id, std::make_pair(std::move(display), kc)).first->second;
    };

    for (const auto& c : p.blas_calls) {
      ++r.calls;
      auto requested = requestedPrecision(c);
      auto it = by_thread.find(c.thread);
      if (it == by_thread.end() || !requested) continue;
      const auto& v = it->second;
      auto first =
          std::lower_bound(v.begin(), v.end(), c.start,
                           [](const Launch& l, model::TimeNs t) { return l.launch_start < t; });
      bool found = false, any_classified = false, any_disagree = false;
      const std::string api = model::toString(c.api);
      const std::string types = describeTypes(c);
      for (auto l = first; l != v.end() && l->launch_start <= c.end; ++l) {
        const auto& k = p.kernels[l->index];
        const auto& [display, kc] = classOf(k.name);
        found = true;
        BlasKernelMatch m;
        m.api = api;
        m.types = types;
        m.requested = *requested;
        m.kernel = display;
        m.kernel_precision = kc.precision;
        m.classified = kc.known && kc.precision != Precision::Other;
        m.agrees = m.classified && kc.precision == *requested;
        m.calls = 1;
        m.kernel_ns = k.start > 0 && k.end > k.start ? k.end - k.start : 0;
        any_classified |= m.classified;
        if (m.classified && !m.agrees) {
          any_disagree = true;
          r.disagreeing_kernel_ns += m.kernel_ns;
        }
        auto same = std::find_if(all.begin(), all.end(),
                                 [&](const BlasKernelMatch& x) { return x.sameKey(m); });
        if (same == all.end())
          all.push_back(std::move(m));
        else
          same->calls += 1, same->kernel_ns += m.kernel_ns;
      }
      if (!found) continue;
      ++r.calls_with_kernels;
      if (any_disagree)
        ++r.disagreeing_calls;
      else if (any_classified)
        ++r.agreeing_calls;
      else
        ++r.unclassified_calls;
    }
  }
  std::stable_sort(all.begin(), all.end(), [](const BlasKernelMatch& a, const BlasKernelMatch& b) {
    bool da = a.classified && !a.agrees, db = b.classified && !b.agrees;
    if (da != db) return da;
    if (a.kernel_ns != b.kernel_ns) return a.kernel_ns > b.kernel_ns;
    return a.calls > b.calls;
  });
  if (all.size() > BlasPrecisionResult::kMaxListed) all.resize(BlasPrecisionResult::kMaxListed);
  r.matches = std::move(all);
  return r;
}

void BlasPrecisionResult::merge(const BlasPrecisionResult& o) {
  calls += o.calls;
  calls_with_kernels += o.calls_with_kernels;
  agreeing_calls += o.agreeing_calls;
  disagreeing_calls += o.disagreeing_calls;
  unclassified_calls += o.unclassified_calls;
  disagreeing_kernel_ns += o.disagreeing_kernel_ns;
  for (const auto& m : o.matches) {
    auto same = std::find_if(matches.begin(), matches.end(),
                             [&](const BlasKernelMatch& x) { return x.sameKey(m); });
    if (same == matches.end())
      matches.push_back(m);
    else
      same->calls += m.calls, same->kernel_ns += m.kernel_ns;
  }
  std::stable_sort(matches.begin(), matches.end(),
                   [](const BlasKernelMatch& a, const BlasKernelMatch& b) {
                     bool da = a.classified && !a.agrees, db = b.classified && !b.agrees;
                     if (da != db) return da;
                     return a.kernel_ns > b.kernel_ns;
                   });
  if (matches.size() > kMaxListed) matches.resize(kMaxListed);
}

} // namespace gpuwise::advisor
