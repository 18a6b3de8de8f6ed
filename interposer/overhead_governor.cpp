#include "interposer/overhead_governor.h"

#include "interposer/raw_event.h"
#include "interposer/recorder.h"
#include "interposer/ring.h"
#include "profiler/clock/tick.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace gpuwise::interposer {

namespace {

// Keeps the compiler from dropping a value the calibration computes but never uses.
template <class T> inline void keep(const T& v) {
  asm volatile("" : : "r,m"(v) : "memory");
}

constexpr uint32_t kRounds = 5;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

} // namespace

HookCosts calibrateHookCosts(uint32_t iterations) {
  HookCosts costs;
  uint32_t per_round = std::max<uint32_t>(iterations / kRounds, 64);
  uint32_t capacity = 64;
  while (capacity < per_round)
    capacity <<= 1;
  std::vector<RawEvent> slots(capacity); // value-initialised: pages touched before timing
  EventRing ring;
  ThreadState& ts = t_state;
  const uint8_t saved_in_hook = ts.in_hook;

  std::vector<double> full, counted;
  for (uint32_t round = 0; round < kRounds; ++round) {
    ring.init(slots.data(), capacity);
    uint64_t begin = profiler::monotonicNs();
    for (uint32_t i = 0; i < per_round; ++i) {
      // What Recorder::begin/end/publish do around the real call.
      keep(detail::g_mode.load(std::memory_order_relaxed));
      keep(ts.in_hook | ts.internal);
      ts.in_hook = 1;
      uint64_t t0 = profiler::processTicks();
      uint64_t t1 = profiler::processTicks();
      ts.in_hook = saved_in_hook;
      RawEvent* e = ring.tryReserve();
      if (!e) break;
      e->t0 = t0;
      e->t1 = t1;
      e->kind = EventKind::Launch;
      e->sub = 0;
      e->api = ApiId::cudaLaunchKernel;
      e->result = 0;
      e->device = uint16_t(ts.device);
      e->u.launch.func = &ring;
      e->u.launch.stream = i;
      e->u.launch.grid_x = i;
      ring.publish();
    }
    full.push_back(double(profiler::monotonicNs() - begin) / per_round);

    begin = profiler::monotonicNs();
    for (uint32_t i = 0; i < per_round; ++i) {
      keep(detail::g_count_launches.load(std::memory_order_relaxed));
      keep(ts.in_hook | ts.internal);
      ring.count();
      ts.in_hook = 1;
      keep(i);
      ts.in_hook = saved_in_hook;
    }
    counted.push_back(double(profiler::monotonicNs() - begin) / per_round);
  }
  ts.in_hook = saved_in_hook;
  costs.full_ns = median(full);
  costs.counted_ns = median(counted);
  return costs;
}

OverheadGovernor::OverheadGovernor(HookCosts costs, double budget_ratio, int64_t start_ns)
    : costs_(costs), budget_(budget_ratio), start_ns_(start_ns), last_ns_(start_ns) {}

OverheadGovernor::LaunchMode OverheadGovernor::onCycle(const Cycle& c) {
  constexpr int64_t kWindowNs = 1'000'000'000; // decide on a second of history, not one cycle
  constexpr uint32_t kMaxPeriod = 64;          // always keep at least 1 cycle in 64 in full
  const int64_t dt = std::max<int64_t>(c.now_ns - last_ns_, 0);
  last_ns_ = std::max(last_ns_, c.now_ns);
  recorded_total_ += c.recorded;
  counted_total_ += c.counted;
  overhead_ns_ += double(c.recorded) * costs_.full_ns + double(c.counted) * costs_.counted_ns;
  if (!c.launches_covered && phase_ != 0) shed_ns_ += dt; // the cycle that just ended was shed

  if (c.launches_covered) { // CUPTI has every launch: counting is simply the way it works
    period_ = 1;
    phase_ = 0;
    window_full_cost_ns_ = 0;
    window_wall_ns_ = 0;
    return LaunchMode::Count;
  }
  // What this cycle would have cost with every launch recorded in full.
  window_full_cost_ns_ += double(c.recorded + c.counted) * costs_.full_ns;
  window_wall_ns_ += dt;
  if (window_wall_ns_ >= kWindowNs && budget_ > 0) {
    double ratio = window_full_cost_ns_ / double(window_wall_ns_);
    if (ratio > budget_)
      period_ = std::min<uint32_t>(kMaxPeriod, uint32_t(std::ceil(ratio / budget_)));
    else if (ratio < 0.8 * budget_) // hysteresis: do not flap around the budget
      period_ = 1;
    window_full_cost_ns_ = 0;
    window_wall_ns_ = 0;
  }
  phase_ = period_ > 1 ? (phase_ + 1) % period_ : 0;
  return phase_ == 0 ? LaunchMode::Record : LaunchMode::Count;
}

void OverheadGovernor::fill(model::ShimCost& out) const {
  out.overhead_ns = uint64_t(overhead_ns_);
  out.session_ns = uint64_t(std::max<int64_t>(last_ns_ - start_ns_, 0));
  out.shed_ns = uint64_t(shed_ns_);
  out.full_call_ns = float(costs_.full_ns);
  out.counted_call_ns = float(costs_.counted_ns);
  out.budget_ratio = float(budget_);
}

} // namespace gpuwise::interposer
