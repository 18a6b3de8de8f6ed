// The CUPTI tier's double-counting guard: hook records CUPTI covered are dropped, the rest kept;
// CUPTI's syncs and allocations the hooks already recorded are dropped.
#include "interposer/coverage_tracker.h"

#include <catch2/catch.hpp>

using namespace gpuwise;
using namespace gpuwise::interposer;
using profiler::ApiClass;
using profiler::ApiSpan;

namespace {
model::KernelExec hookKernel(uint32_t thread, int64_t start, int64_t end) {
  model::KernelExec k;
  k.thread = thread;
  k.launch_start = start;
  k.launch_end = end;
  return k;
}
ApiSpan span(uint32_t thread, int64_t start, int64_t end, ApiClass cls) {
  ApiSpan s;
  s.thread = thread;
  s.start = start;
  s.end = end;
  s.cls = cls;
  return s;
}
CoverageTracker::Options tight() {
  CoverageTracker::Options o;
  o.tolerance_ns = 100;
  o.max_hold_ns = 1000000;
  o.cupti_hold_ns = 1000;
  return o;
}
} // namespace

TEST_CASE("A hook launch with a CUPTI API record inside it is dropped; one without is kept") {
  CoverageTracker t(tight());
  t.holdHook(hookKernel(7, 1000, 2000)); // CUPTI saw this one
  t.holdHook(hookKernel(7, 3000, 4000)); // and missed this one
  t.holdHook(hookKernel(7, 5000, 6000)); // not yet decidable
  t.addApiSpan(span(7, 1100, 1900, ApiClass::Launch));
  t.addApiSpan(span(7, 1200, 1800, ApiClass::Launch)); // the driver call inside the runtime call
  t.addApiSpan(span(7, 4500, 4600, ApiClass::Copy));   // a later call: CUPTI has moved past 4000
  Records out;
  t.decide(10000, out);
  REQUIRE(out.kernels.size() == 1);
  CHECK(out.kernels[0].launch_start == 3000);
  CHECK(t.stats().hooks_covered == 1);
  CHECK(t.stats().hooks_emitted == 1);
  CHECK(t.heldHooks() == 1); // 5000..6000 waits: nothing from CUPTI after it yet
  t.addApiSpan(span(7, 5100, 5900, ApiClass::Launch));
  t.addApiSpan(span(7, 7000, 7100, ApiClass::Launch));
  out.clear();
  t.decide(10000, out);
  CHECK(out.kernels.empty());
  CHECK(t.stats().hooks_covered == 2);
  CHECK(t.heldHooks() == 0);
}

TEST_CASE("Coverage needs the same thread and the same class") {
  CoverageTracker t(tight());
  t.holdHook(hookKernel(1, 1000, 2000));
  model::Copy c;
  c.thread = 1;
  c.call_start = 3000;
  c.call_end = 4000;
  t.holdHook(c);
  t.addApiSpan(span(2, 1100, 1900, ApiClass::Launch)); // other thread
  t.addApiSpan(span(1, 3100, 3900, ApiClass::Launch)); // wrong class
  t.addApiSpan(span(1, 9000, 9100, ApiClass::Sync));
  Records out;
  t.decide(20000, out);
  CHECK(out.kernels.size() == 1);
  CHECK(out.copies.size() == 1);
}

TEST_CASE("Hook records wait at most max_hold for CUPTI, and all are decided at exit") {
  CoverageTracker t(tight());
  t.holdHook(hookKernel(3, 1000, 2000));
  Records out;
  t.decide(500000, out); // nothing from CUPTI on thread 3, not yet past max_hold
  CHECK(out.kernels.empty());
  t.decide(2000000, out);
  CHECK(out.kernels.size() == 1);
  t.holdHook(hookKernel(3, 3000000, 3000100));
  t.addApiSpan(span(3, 3000010, 3000090, ApiClass::Launch)); // arrived before anything later
  out.clear();
  t.decideAll(out);
  CHECK(out.kernels.empty()); // covered, decided at exit
  CHECK(t.stats().hooks_covered == 1);
}

TEST_CASE("A CUPTI span that arrives before its hook record still covers it") {
  CoverageTracker t(tight());
  t.addApiSpan(span(4, 1100, 1900, ApiClass::Memset));
  Records out;
  t.decide(2000, out);
  model::Memset m;
  m.thread = 4;
  m.call_start = 1000;
  m.call_end = 2000;
  t.holdHook(m);
  t.addApiSpan(span(4, 5000, 5100, ApiClass::Memset));
  t.decide(6000, out);
  CHECK(out.memsets.empty());
  CHECK(t.stats().hooks_covered == 1);
}

TEST_CASE("CUPTI syncs and allocations the hooks recorded are dropped, others kept") {
  CoverageTracker t(tight());
  model::HostSync hook;
  hook.thread = 5;
  hook.start = 1000;
  hook.end = 9000;
  hook.kind = model::SyncKind::Stream;
  t.noteHookSync(hook);
  model::HostSync dup = hook, other = hook;
  dup.start = 1100;
  dup.end = 8900;
  other.start = 20000;
  other.end = 21000;
  t.holdCuptiSync(dup, 100);
  t.holdCuptiSync(other, 100);
  model::HostSync unthreaded = dup; // CUPTI could not name the thread: any hook sync may match
  unthreaded.thread = 0;
  t.holdCuptiSync(unthreaded, 100);

  model::Allocation a;
  a.address = 0x1000;
  a.bytes = 64;
  t.noteHookAllocation(a);
  t.holdCuptiAllocation(a, 100);
  model::Allocation b = a;
  b.address = 0x2000;
  t.holdCuptiAllocation(b, 100);

  Records out;
  t.decide(500, out); // within cupti_hold: nothing decided
  CHECK(out.syncs.empty());
  CHECK(t.heldCupti() == 5);
  t.decide(5000, out);
  REQUIRE(out.syncs.size() == 2); // `other`, and one of dup/unthreaded (one hook covers one)
  CHECK(out.syncs[0].start == 20000);
  REQUIRE(out.allocations.size() == 1);
  CHECK(out.allocations[0].address == 0x2000);
  CHECK(t.stats().cupti_syncs_dropped == 1);
  CHECK(t.stats().cupti_allocs_dropped == 1);
}
