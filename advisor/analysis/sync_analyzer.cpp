#include "advisor/analysis/sync_analyzer.h"

#include "advisor/analysis/interval_union.h"

#include <map>
#include <unordered_set>

namespace gpuwise::advisor {
namespace {

struct ThreadCalls {
  std::vector<Interval> all;
  std::array<std::vector<Interval>, kSyncKinds> by_kind;
};

} // namespace

void SyncResult::merge(const SyncResult& o) {
  calls += o.calls;
  blocked_ns += o.blocked_ns;
  threads += o.threads;
  untimed_calls += o.untimed_calls;
  for (size_t k = 0; k < kSyncKinds; ++k) {
    by_kind[k].calls += o.by_kind[k].calls;
    by_kind[k].blocked_ns += o.by_kind[k].blocked_ns;
  }
}

SyncResult analyzeSyncs(const model::Trace& trace) {
  SyncResult r;
  for (const auto& p : trace.processes) {
    std::map<uint32_t, ThreadCalls> threads;
    auto add = [&](model::SyncKind kind, model::TimeNs start, model::TimeNs end, uint32_t thread) {
      auto k = static_cast<size_t>(kind);
      if (k >= kSyncKinds) k = 0;
      ++r.calls;
      ++r.by_kind[k].calls;
      if (!isTimed(start, end)) {
        ++r.untimed_calls;
        return;
      }
      auto& t = threads[thread];
      t.all.push_back({start, end});
      t.by_kind[k].push_back({start, end});
    };
    // A synchronous copy may arrive twice: as a Copy and as a SyncCopy HostSync with the same
    // correlation id. The union already counts its time once; this keeps the call count honest.
    std::unordered_set<uint64_t> sync_copy_correlations;
    for (const auto& s : p.syncs) {
      if (s.kind == model::SyncKind::StreamWaitEvent) continue;
      if (s.kind == model::SyncKind::SyncCopy && s.correlation != 0)
        sync_copy_correlations.insert(s.correlation);
      add(s.kind, s.start, s.end, s.thread);
    }
    for (const auto& c : p.copies) {
      if (c.async || (c.correlation != 0 && sync_copy_correlations.contains(c.correlation)))
        continue;
      add(model::SyncKind::SyncCopy, c.call_start, c.call_end, c.thread);
    }
    for (auto& [id, t] : threads) {
      ++r.threads;
      r.blocked_ns += unionLength(std::move(t.all));
      for (size_t k = 0; k < kSyncKinds; ++k) {
        if (!t.by_kind[k].empty()) r.by_kind[k].blocked_ns += unionLength(std::move(t.by_kind[k]));
      }
    }
  }
  return r;
}

} // namespace gpuwise::advisor
