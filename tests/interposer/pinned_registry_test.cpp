#include "interposer/pinned_registry.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <thread>
#include <vector>

using gpuwise::interposer::PinnedRegistry;
using gpuwise::model::MemoryKind;

TEST_CASE("Host pointers classify as pinned, managed or pageable by registered range") {
  PinnedRegistry r(4);
  static char buffer[1 << 16];
  char* pinned = buffer;
  char* managed = buffer + 8192;
  CHECK(r.classify(pinned, 0) == MemoryKind::Pageable); // nothing registered yet
  r.add(pinned, 4096, MemoryKind::Pinned);
  r.add(managed, 4096, MemoryKind::Managed);
  CHECK(r.rangeCount() == 2);
  CHECK(r.classify(pinned, 0) == MemoryKind::Pinned);
  CHECK(r.classify(pinned + 4095, 1) == MemoryKind::Pinned);
  CHECK(r.classify(pinned + 4096, 1) == MemoryKind::Pageable); // one past the end
  CHECK(r.classify(managed + 100, 2) == MemoryKind::Managed);
  CHECK(r.classify(buffer + 20000, 3) == MemoryKind::Pageable);
  CHECK(r.classify(pinned, 99) == MemoryKind::Unknown); // no hazard slot: cannot read safely

  CHECK(r.remove(pinned + 1) == 0); // only range starts can be removed
  CHECK(r.remove(pinned) == 4096);
  CHECK(r.classify(pinned, 0) == MemoryKind::Pageable);
  CHECK(r.classify(managed, 0) == MemoryKind::Managed);
  // Overlapping registration replaces the old range.
  r.add(managed + 1024, 8192, MemoryKind::Pinned);
  CHECK(r.rangeCount() == 1);
  CHECK(r.classify(managed, 0) == MemoryKind::Pageable);
  CHECK(r.classify(managed + 2000, 0) == MemoryKind::Pinned);
  // No reader holds an old snapshot: every retired array was freed.
  CHECK(r.retiredCount() == 0);
  r.clear();
  CHECK(r.classify(managed + 2000, 0) == MemoryKind::Pageable);
}

TEST_CASE("Readers classify while a writer churns registrations; retired arrays are reclaimed") {
  constexpr uint32_t kReaders = 4;
  PinnedRegistry r(kReaders);
  static char base[1 << 20];
  // A range that stays registered throughout: readers must always see it as pinned.
  r.add(base, 4096, MemoryKind::Pinned);
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> wrong{0}, reads{0};
  std::vector<std::thread> readers;
  for (uint32_t i = 0; i < kReaders; ++i) {
    readers.emplace_back([&, i] {
      while (!stop.load(std::memory_order_relaxed)) {
        if (r.classify(base + 100, i) != MemoryKind::Pinned) wrong.fetch_add(1);
        if (r.classify(base + 4096 * 200, i) != MemoryKind::Pageable) wrong.fetch_add(1);
        reads.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  // Churn other ranges: each add/remove publishes a new array and retires the old one.
  for (int round = 0; round < 2000; ++round) {
    char* p = base + 4096 * (1 + round % 100);
    r.add(p, 4096, MemoryKind::Pinned);
    r.remove(p);
  }
  while (reads.load() < 10000)
    std::this_thread::yield();
  stop = true;
  for (auto& t : readers)
    t.join();
  CHECK(wrong.load() == 0);
  CHECK(r.rangeCount() == 1);
  // Readers are gone; the next publish frees whatever they still held at the end.
  r.add(base + 8192, 16, MemoryKind::Pinned);
  CHECK(r.retiredCount() == 0);
}
