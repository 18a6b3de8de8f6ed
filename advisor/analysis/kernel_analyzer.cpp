#include "advisor/analysis/kernel_analyzer.h"

#include "advisor/analysis/interval_union.h"
#include "advisor/precision/demangle.h"

#include <algorithm>
#include <cctype>
#include <unordered_map>

namespace gpuwise::advisor {
namespace {

void addConfig(KernelStats& s, const LaunchConfig& c) {
  for (auto& existing : s.configs) {
    if (existing.sameShape(c)) {
      existing.count += c.count;
      return;
    }
  }
  if (s.configs.size() < KernelStats::kMaxConfigs) {
    s.configs.push_back(c);
  } else {
    s.other_config_count += c.count;
  }
}

void addTimed(KernelStats& s, uint64_t timed, model::TimeNs total, model::TimeNs min_ns,
              model::TimeNs max_ns) {
  if (timed == 0) return;
  s.min_ns = s.timed_count == 0 ? min_ns : std::min(s.min_ns, min_ns);
  s.max_ns = std::max(s.max_ns, max_ns);
  s.timed_count += timed;
  s.total_ns += total;
}

void mergeInto(KernelStats& into, const KernelStats& from) {
  into.count += from.count;
  addTimed(into, from.timed_count, from.total_ns, from.min_ns, from.max_ns);
  into.flags |= from.flags;
  for (const auto& c : from.configs)
    addConfig(into, c);
  into.other_config_count += from.other_config_count;
  into.occupancy.add(from.occupancy);
}

void finish(KernelResult& r) {
  r.occupancy = {};
  for (const auto& s : r.by_name)
    r.occupancy.add(s.occupancy);
  for (auto& s : r.by_name) {
    std::stable_sort(
        s.configs.begin(), s.configs.end(),
        [](const LaunchConfig& a, const LaunchConfig& b) { return a.count > b.count; });
  }
  std::sort(r.by_name.begin(), r.by_name.end(), [](const KernelStats& a, const KernelStats& b) {
    if (a.total_ns != b.total_ns) return a.total_ns > b.total_ns;
    if (a.count != b.count) return a.count > b.count;
    return a.name < b.name;
  });
}

} // namespace

std::optional<double> KernelStats::meanSeconds() const {
  if (timed_count == 0) return std::nullopt;
  return static_cast<double>(total_ns) / 1e9 / static_cast<double>(timed_count);
}

KernelResult analyzeKernels(const model::Trace& trace) {
  KernelResult r;
  std::unordered_map<std::string, size_t> index;
  for (const auto& p : trace.processes) {
    OccupancyCalculator occupancy(p);
    // Per process, names are ids: resolve each id once.
    std::vector<int64_t> slot_of_id(p.names.size(), -1);
    for (const auto& k : p.kernels) {
      int64_t slot = k.name < slot_of_id.size() ? slot_of_id[k.name] : -1;
      if (slot < 0) {
        std::string name(p.names.get(k.name));
        auto [it, inserted] = index.try_emplace(name, r.by_name.size());
        if (inserted) {
          r.by_name.emplace_back();
          r.by_name.back().name = name;
        }
        slot = static_cast<int64_t>(it->second);
        if (k.name < slot_of_id.size()) slot_of_id[k.name] = slot;
      }
      auto& s = r.by_name[static_cast<size_t>(slot)];
      ++s.count;
      ++r.count;
      s.flags |= k.flags;
      if (isTimed(k.start, k.end)) {
        auto d = k.end - k.start;
        addTimed(s, 1, d, d, d);
        ++r.timed_count;
        r.total_ns += d;
      }
      addConfig(s, LaunchConfig{k.grid, k.block, k.registers_per_thread, k.static_shared_bytes,
                                k.dynamic_shared_bytes, 1});
      occupancy.add(k, s.occupancy);
    }
  }
  for (auto& s : r.by_name) {
    s.display_name = profiler::demangle(s.name);
    s.kernel_class = profiler::classifyKernel(s.display_name);
    s.matmul_like = isMatmulLike(s.display_name);
  }
  finish(r);
  return r;
}

bool isMatmulLike(std::string_view name) {
  std::string lower(name);
  for (auto& c : lower)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (std::string_view w : {"gemm", "matmul", "wgrad", "dgrad", "winograd", "nvjet", "xmma",
                             "bmm_", "implicit_convolve", "fprop"}) {
    if (lower.find(w) != std::string::npos) return true;
  }
  // "conv" but not "convert" (dtype conversion kernels are elementwise).
  for (size_t at = lower.find("conv"); at != std::string::npos; at = lower.find("conv", at + 4))
    if (lower.compare(at, 7, "convert") != 0) return true;
  return false;
}

void KernelResult::merge(const KernelResult& other) {
  count += other.count;
  timed_count += other.timed_count;
  total_ns += other.total_ns;
  for (const auto& s : other.by_name) {
    auto it = std::find_if(by_name.begin(), by_name.end(),
                           [&](const KernelStats& x) { return x.name == s.name; });
    if (it == by_name.end()) {
      by_name.push_back(s);
    } else {
      mergeInto(*it, s);
    }
  }
  finish(*this);
}

} // namespace gpuwise::advisor
