// The SPSC rings and their pool under concurrency: every event seen once and in order, drops
// counted exactly when a ring is full, rings claimed, released and recycled.
#include "interposer/ring_pool.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <thread>
#include <vector>

using namespace gpuwise::interposer;

namespace {
RawEvent tagged(uint32_t writer, uint64_t seq) {
  RawEvent e{};
  e.kind = EventKind::Launch;
  e.t0 = seq;
  e.t1 = writer;
  return e;
}
} // namespace

TEST_CASE("A full ring drops and counts exactly; the reader sees the rest in order") {
  RingPool pool;
  REQUIRE(pool.init(1, 64));
  RingSlot* slot = pool.claim(1234);
  REQUIRE(slot);
  EventRing& ring = slot->ring;
  CHECK(ring.capacity() == 64);
  int written = 0, dropped = 0;
  for (int i = 0; i < 100; ++i) {
    if (RawEvent* e = ring.tryReserve()) {
      *e = tagged(0, uint64_t(i));
      ring.publish();
      ++written;
    } else {
      ++dropped;
    }
  }
  CHECK(written == 64);
  CHECK(dropped == 36);
  CHECK(ring.takeDropped() == 36);
  CHECK(ring.takeDropped() == 0);
  std::vector<uint64_t> seen;
  CHECK(ring.drain([&](const RawEvent& e) { seen.push_back(e.t0); }) == 64);
  REQUIRE(seen.size() == 64);
  for (uint64_t i = 0; i < 64; ++i)
    CHECK(seen[i] == i);
  // Space again once drained.
  CHECK(ring.tryReserve() != nullptr);
}

TEST_CASE("Half full is signalled once per fill") {
  RingPool pool;
  REQUIRE(pool.init(1, 64));
  EventRing& ring = pool.claim(1)->ring;
  int signals = 0;
  for (int i = 0; i < 64; ++i) {
    REQUIRE(ring.tryReserve());
    signals += ring.publish();
    if (i == 31) CHECK(signals == 1);
  }
  CHECK(signals == 1);
}

TEST_CASE("Eight writers and one reader: every event once, per-thread order, exact drops") {
  constexpr uint32_t kWriters = 8;
  constexpr uint64_t kEvents = 200000;
  RingPool pool;
  REQUIRE(pool.init(kWriters, 256)); // small rings so they fill and drop under load
  std::atomic<bool> done{false};
  std::atomic<uint32_t> finished{0};
  std::vector<uint64_t> dropped_by_writer(kWriters, 0);
  std::vector<RingSlot*> slots;
  for (uint32_t w = 0; w < kWriters; ++w)
    slots.push_back(pool.claim(1000 + w));
  for (RingSlot* s : slots)
    REQUIRE(s);
  std::vector<std::thread> writers;
  for (uint32_t w = 0; w < kWriters; ++w) {
    writers.emplace_back(
        [&, w] { // no Catch2 assertions on these threads: Catch2 is not thread-safe
          RingSlot* slot = slots[w];
          uint64_t drops = 0;
          for (uint64_t i = 0; i < kEvents; ++i) {
            if (RawEvent* e = slot->ring.tryReserve()) {
              *e = tagged(w, i);
              slot->ring.publish();
            } else {
              ++drops;
            }
          }
          dropped_by_writer[w] = drops;
          pool.release(slot);
          finished.fetch_add(1);
        });
  }
  std::vector<uint64_t> next(kWriters, 0), received(kWriters, 0), drops_seen(kWriters, 0);
  bool in_order = true, right_ring = true;
  auto drainAll = [&] {
    pool.forEachActive([&](RingSlot& s) {
      uint32_t w = s.tid - 1000;
      s.ring.drain([&](const RawEvent& e) {
        if (e.t1 != w) right_ring = false;
        if (e.t0 < next[w]) in_order = false; // never backwards, never twice
        next[w] = e.t0 + 1;
        ++received[w];
      });
      drops_seen[w] += s.ring.takeDropped();
      pool.recycle(s);
    });
  };
  while (finished.load() < kWriters)
    drainAll();
  for (auto& t : writers)
    t.join();
  drainAll();
  done = true;
  CHECK(in_order);
  CHECK(right_ring);
  uint64_t total_dropped = 0;
  for (uint32_t w = 0; w < kWriters; ++w) {
    INFO("writer " << w);
    CHECK(received[w] + dropped_by_writer[w] == kEvents);
    CHECK(drops_seen[w] == dropped_by_writer[w]);
    total_dropped += dropped_by_writer[w];
  }
  // Released and drained rings went back to the pool.
  CHECK(pool.inUse() == 0);
  INFO("dropped " << total_dropped << " of " << kWriters * kEvents);
}

TEST_CASE("The pool hands out each ring once, refuses when exhausted, recycles released rings") {
  RingPool pool;
  REQUIRE(pool.init(3, 64));
  RingSlot* a = pool.claim(1);
  RingSlot* b = pool.claim(2);
  RingSlot* c = pool.claim(3);
  REQUIRE((a && b && c));
  CHECK(a != b);
  CHECK(b != c);
  CHECK(pool.claim(4) == nullptr);
  CHECK(pool.inUse() == 3);

  // A released ring with events left is drained before it can be reused.
  RawEvent* e = b->ring.tryReserve();
  REQUIRE(e);
  *e = tagged(2, 7);
  b->ring.publish();
  pool.release(b);
  CHECK_FALSE(pool.recycle(*b)); // still holds an event
  CHECK(pool.claim(5) == nullptr);
  int seen = 0;
  pool.forEachActive([&](RingSlot& s) {
    s.ring.drain([&](const RawEvent&) { ++seen; });
    pool.recycle(s);
  });
  CHECK(seen == 1);
  RingSlot* d = pool.claim(5);
  CHECK(d == b);
  CHECK(d->tid == 5);
  CHECK(d->ring.empty());

  // Many threads racing for few rings: never two owners.
  RingPool small;
  REQUIRE(small.init(4, 64));
  std::atomic<int> got{0};
  std::vector<std::thread> ts;
  std::vector<RingSlot*> owned(16, nullptr);
  for (int i = 0; i < 16; ++i)
    ts.emplace_back([&, i] {
      owned[size_t(i)] = small.claim(uint32_t(100 + i));
      if (owned[size_t(i)]) got.fetch_add(1);
    });
  for (auto& t : ts)
    t.join();
  CHECK(got.load() == 4);
  std::vector<RingSlot*> distinct;
  for (RingSlot* s : owned)
    if (s) distinct.push_back(s);
  std::sort(distinct.begin(), distinct.end());
  CHECK(std::unique(distinct.begin(), distinct.end()) == distinct.end());
}

TEST_CASE("After fork every ring is free and empty") {
  RingPool pool;
  REQUIRE(pool.init(2, 64));
  RingSlot* a = pool.claim(1);
  *a->ring.tryReserve() = tagged(1, 1);
  a->ring.publish();
  pool.resetAfterFork();
  CHECK(pool.inUse() == 0);
  CHECK(a->ring.empty());
  CHECK(pool.claim(9) != nullptr);
}
