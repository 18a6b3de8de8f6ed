// The overhead governor: the estimate is counts x calibrated costs, and launch detail is shed in
// sampled windows exactly when recording everything would cost more than the budget.
#include "interposer/overhead_governor.h"

#include <catch2/catch.hpp>

using namespace gpuwise;
using namespace gpuwise::interposer;
using Mode = OverheadGovernor::LaunchMode;

namespace {
constexpr int64_t kMs = 1'000'000;
}

TEST_CASE("Calibrated hook costs are positive, and counting is cheaper than recording") {
  HookCosts c = calibrateHookCosts(20000);
  CHECK(c.full_ns > 0);
  CHECK(c.counted_ns > 0);
  CHECK(c.full_ns < 5000);
  // Two counter reads and a 64-byte event against one plain store: a loose bound, robust to noise.
  CHECK(c.counted_ns < c.full_ns);
}

TEST_CASE("The estimate is the counts times the calibrated costs") {
  OverheadGovernor g({.full_ns = 40, .counted_ns = 4}, 0.01, 0);
  g.onCycle({.now_ns = 50 * kMs, .recorded = 1000, .counted = 0});
  g.onCycle({.now_ns = 100 * kMs, .recorded = 10, .counted = 500, .launches_covered = true});
  model::ShimCost cost;
  g.fill(cost);
  CHECK(cost.overhead_ns == 1010 * 40 + 500 * 4);
  CHECK(cost.session_ns == uint64_t(100 * kMs));
  CHECK(cost.shed_ns == 0);
  CHECK(cost.full_call_ns == Approx(40));
  CHECK(cost.budget_ratio == Approx(0.01));
}

TEST_CASE("Within the budget every launch is recorded; CUPTI's launches are always counted") {
  OverheadGovernor g({.full_ns = 40, .counted_ns = 4}, 0.01, 0);
  // 100k launches/s x 40 ns = 0.4% of wall time.
  for (int i = 1; i <= 60; ++i)
    CHECK(g.onCycle({.now_ns = i * 50 * kMs, .recorded = 5000}) == Mode::Record);
  CHECK_FALSE(g.shedding());
  CHECK(g.onCycle({.now_ns = 61 * 50 * kMs, .recorded = 5000, .launches_covered = true}) ==
        Mode::Count);
}

TEST_CASE(
    "Over the budget, one cycle in `period` records and the rest count; back under, all record") {
  OverheadGovernor g({.full_ns = 40, .counted_ns = 4}, 0.01, 0);
  // 1M launches/s x 40 ns = 4% of wall time: four times the budget.
  int64_t t = 0;
  for (int i = 0; i < 20; ++i)
    g.onCycle({.now_ns = t += 50 * kMs, .recorded = 50000});
  REQUIRE(g.shedding());
  CHECK(g.period() == 4);
  // The launch rate stays the same; the hooks now record one cycle in four and count the rest.
  int records = 0, counts = 0;
  for (int i = 0; i < 40; ++i) {
    Mode m = g.onCycle({.now_ns = t += 50 * kMs, .recorded = 12500, .counted = 37500});
    (m == Mode::Record ? records : counts)++;
  }
  CHECK(records == 10);
  CHECK(counts == 30);
  CHECK(g.period() == 4); // the full-detail cost is still judged on every launch, counted or not
  model::ShimCost cost;
  g.fill(cost);
  CHECK(cost.shed_ns > uint64_t(1400 * kMs)); // about three quarters of the last two seconds
  CHECK(cost.shed_ns < uint64_t(1600 * kMs));

  // The job slows its launches to 100k/s: 0.4%, under 80% of the budget, so shedding stops.
  for (int i = 0; i < 40; ++i)
    g.onCycle({.now_ns = t += 50 * kMs, .recorded = 1250, .counted = 3750});
  CHECK_FALSE(g.shedding());
  CHECK(g.onCycle({.now_ns = t += 50 * kMs, .recorded = 5000}) == Mode::Record);
}

TEST_CASE("A zero budget never sheds") {
  OverheadGovernor g({.full_ns = 40, .counted_ns = 4}, 0.0, 0);
  int64_t t = 0;
  for (int i = 0; i < 40; ++i)
    CHECK(g.onCycle({.now_ns = t += 50 * kMs, .recorded = 500000}) == Mode::Record);
}
