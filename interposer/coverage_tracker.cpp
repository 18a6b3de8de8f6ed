#include "interposer/coverage_tracker.h"

#include <algorithm>

namespace gpuwise::interposer {

using profiler::ApiClass;

namespace {
template <class D, class T> void insertByStart(D& d, T&& v) {
  if (d.empty() || d.back().start <= v.start) {
    d.push_back(std::forward<T>(v));
    return;
  }
  auto pos = std::upper_bound(d.begin(), d.end(), v.start,
                              [](int64_t s, const auto& x) { return s < x.start; });
  d.insert(pos, std::forward<T>(v));
}
} // namespace

void CoverageTracker::hold(uint32_t thread, HeldHook&& h) {
  Lane& lane = lanes_[thread];
  lane.hook_watermark = std::max(lane.hook_watermark, h.start);
  insertByStart(lane.hooks, std::move(h));
  ++held_hooks_;
}

void CoverageTracker::holdHook(const model::KernelExec& k) {
  hold(k.thread, HeldHook{k.launch_start, k.launch_end, ApiClass::Launch, k, {}, {}});
}
void CoverageTracker::holdHook(const model::Copy& c) {
  hold(c.thread, HeldHook{c.call_start, c.call_end, ApiClass::Copy, {}, c, {}});
}
void CoverageTracker::holdHook(const model::Memset& m) {
  hold(m.thread, HeldHook{m.call_start, m.call_end, ApiClass::Memset, {}, {}, m});
}

void CoverageTracker::noteHookSync(const model::HostSync& s) {
  Lane& lane = lanes_[s.thread];
  lane.hook_watermark = std::max(lane.hook_watermark, s.start);
  insertByStart(lane.syncs, Mark{s.start, s.end, false});
}

void CoverageTracker::noteHookAllocation(const model::Allocation& a) {
  AllocKey key{a.address, a.is_free};
  hook_allocs_[key] = a.time;
  hook_alloc_order_.emplace_back(a.time, key);
}

void CoverageTracker::addApiSpan(const profiler::ApiSpan& span) {
  if (span.cls == ApiClass::Other) return;
  Lane& lane = lanes_[span.thread];
  lane.api_watermark = std::max(lane.api_watermark, span.start);
  insertByStart(lane.spans, Span{span.start, span.end, span.cls, false});
}

void CoverageTracker::holdCuptiSync(const model::HostSync& s, int64_t now_ns) {
  cupti_syncs_.emplace_back(s, now_ns);
}

void CoverageTracker::holdCuptiAllocation(const model::Allocation& a, int64_t now_ns) {
  cupti_allocs_.emplace_back(a, now_ns);
}

bool CoverageTracker::covered(Lane& lane, const HeldHook& h) {
  int64_t tol = options_.tolerance_ns;
  auto it = std::lower_bound(lane.spans.begin(), lane.spans.end(), h.start - tol,
                             [](const Span& s, int64_t v) { return s.start < v; });
  bool found = false;
  // A runtime call and the driver call inside it are both inside the hook: both are this call's.
  for (; it != lane.spans.end() && it->start <= h.end + tol; ++it) {
    if (it->used || it->cls != h.cls || it->end > h.end + tol) continue;
    it->used = true;
    found = true;
  }
  return found;
}

void CoverageTracker::emit(const HeldHook& h, Records& out) {
  switch (h.cls) {
  case ApiClass::Launch: out.kernels.push_back(h.kernel); break;
  case ApiClass::Copy: out.copies.push_back(h.copy); break;
  case ApiClass::Memset: out.memsets.push_back(h.memset); break;
  default: break;
  }
}

bool CoverageTracker::hookSyncCovers(Lane& lane, const model::HostSync& s) {
  int64_t tol = options_.tolerance_ns;
  // The hook's interval starts before CUPTI's: look from the last mark starting at or before it.
  auto it = std::upper_bound(lane.syncs.begin(), lane.syncs.end(), s.start + tol,
                             [](int64_t v, const Mark& m) { return v < m.start; });
  while (it != lane.syncs.begin()) {
    --it;
    if (it->end + tol < s.start) break; // sorted by start; marks do not overlap on one thread
    if (!it->used && it->start - tol <= s.start && s.end <= it->end + tol) {
      it->used = true;
      return true;
    }
  }
  return false;
}

void CoverageTracker::decideLane(Lane& lane, int64_t now_ns, bool all, Records& out) {
  int64_t tol = options_.tolerance_ns;
  while (!lane.hooks.empty()) {
    const HeldHook& h = lane.hooks.front();
    bool due = all || lane.api_watermark > h.end + tol || now_ns - h.end > options_.max_hold_ns ||
               held_hooks_ > options_.max_held;
    if (!due) break;
    if (covered(lane, h)) {
      ++stats_.hooks_covered;
    } else {
      emit(h, out);
      ++stats_.hooks_emitted;
    }
    lane.hooks.pop_front();
    --held_hooks_;
  }
  // A span can only serve a hook record that starts no later than it; hook records arrive in
  // order per thread, so spans behind both the oldest held record and the newest seen are spent.
  int64_t horizon = lane.hooks.empty() ? lane.hook_watermark
                                       : std::min(lane.hook_watermark, lane.hooks.front().start);
  while (!lane.spans.empty()) {
    const Span& s = lane.spans.front();
    if (!(s.used || s.end + tol < horizon || now_ns - s.end > options_.max_hold_ns || all)) break;
    lane.spans.pop_front();
  }
  while (!lane.syncs.empty() && (all || now_ns - lane.syncs.front().end > options_.max_hold_ns))
    lane.syncs.pop_front();
}

void CoverageTracker::decideCupti(int64_t now_ns, bool all, Records& out) {
  while (!cupti_syncs_.empty() &&
         (all || now_ns - cupti_syncs_.front().second > options_.cupti_hold_ns)) {
    const model::HostSync& s = cupti_syncs_.front().first;
    bool dup = false;
    if (s.thread != 0) {
      auto lane = lanes_.find(s.thread);
      dup = lane != lanes_.end() && hookSyncCovers(lane->second, s);
    } else {
      // CUPTI could not name the thread (its API record never came): any thread's hook will do.
      for (auto& [tid, lane] : lanes_)
        if ((dup = hookSyncCovers(lane, s))) break;
    }
    if (dup) {
      ++stats_.cupti_syncs_dropped;
    } else {
      out.syncs.push_back(s);
      ++stats_.cupti_syncs_emitted;
    }
    cupti_syncs_.pop_front();
  }
  while (!cupti_allocs_.empty() &&
         (all || now_ns - cupti_allocs_.front().second > options_.cupti_hold_ns)) {
    const model::Allocation& a = cupti_allocs_.front().first;
    auto it = hook_allocs_.find(AllocKey{a.address, a.is_free});
    if (it != hook_allocs_.end()) {
      hook_allocs_.erase(it);
      ++stats_.cupti_allocs_dropped;
    } else {
      out.allocations.push_back(a);
      ++stats_.cupti_allocs_emitted;
    }
    cupti_allocs_.pop_front();
  }
  while (!hook_alloc_order_.empty() &&
         (all || now_ns - hook_alloc_order_.front().first > options_.max_hold_ns)) {
    auto [time, key] = hook_alloc_order_.front();
    hook_alloc_order_.pop_front();
    auto it = hook_allocs_.find(key);
    if (it != hook_allocs_.end() && it->second == time) hook_allocs_.erase(it);
  }
}

void CoverageTracker::decide(int64_t now_ns, Records& out) {
  for (auto& [tid, lane] : lanes_)
    decideLane(lane, now_ns, false, out);
  decideCupti(now_ns, false, out);
  // Threads that went quiet leave empty lanes behind; drop them so the map stays small.
  std::erase_if(lanes_, [&](const auto& kv) {
    const Lane& l = kv.second;
    return l.hooks.empty() && l.spans.empty() && l.syncs.empty() &&
           now_ns - std::max(l.api_watermark, l.hook_watermark) > options_.max_hold_ns;
  });
}

void CoverageTracker::decideAll(Records& out) {
  // CUPTI syncs first, while the hook marks they may match are still there.
  decideCupti(0, true, out);
  for (auto& [tid, lane] : lanes_)
    decideLane(lane, 0, true, out);
  lanes_.clear();
  held_hooks_ = 0;
}

} // namespace gpuwise::interposer
