#include "profiler/cupti/buffer_pool.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

using gpuwise::profiler::BufferPool;

TEST_CASE("The buffer pool lends each buffer once and counts exhaustion") {
  BufferPool pool(1001, 3);
  REQUIRE(pool.valid());
  CHECK(pool.bufferBytes() == 1008); // rounded to CUPTI's 8-byte alignment
  uint8_t* a = pool.acquire();
  uint8_t* b = pool.acquire();
  uint8_t* c = pool.acquire();
  REQUIRE(a);
  REQUIRE(b);
  REQUIRE(c);
  CHECK(std::set<uint8_t*>{a, b, c}.size() == 3);
  CHECK(reinterpret_cast<uintptr_t>(a) % 8 == 0);
  CHECK(pool.acquire() == nullptr);
  CHECK(pool.exhausted() == 1);
  pool.complete(b, 10);
  pool.complete(a, 20);
  int foreign = 0;
  pool.complete(&a[3], 5); // not a buffer start
  foreign += 1;
  CHECK(pool.foreign() == uint64_t(foreign));
  std::vector<std::pair<uint8_t*, size_t>> seen;
  CHECK(pool.consume([&](uint8_t* p, size_t n) { seen.emplace_back(p, n); }) == 2);
  REQUIRE(seen.size() == 2);
  CHECK(seen[0] == std::make_pair(b, size_t{10})); // completion order
  CHECK(seen[1] == std::make_pair(a, size_t{20}));
  CHECK(pool.inUse() == 1);
  CHECK(pool.acquire() != nullptr);
}

TEST_CASE("Concurrent lenders and one consumer see every completed buffer exactly once") {
  BufferPool pool(256, 8);
  std::atomic<uint64_t> completed{0}, refused{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> lenders;
  constexpr int kPerThread = 5000;
  for (int t = 0; t < 4; ++t) {
    lenders.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        uint8_t* p;
        while (!(p = pool.acquire())) { // all lent or awaiting the consumer: CUPTI would drop here
          refused.fetch_add(1);
          std::this_thread::yield();
        }
        size_t tag = size_t(t) * kPerThread + size_t(i);
        std::memcpy(p, &tag, sizeof tag);
        pool.complete(p, sizeof tag);
        completed.fetch_add(1);
      }
    });
  }
  std::set<size_t> tags;
  uint64_t consumed = 0;
  std::thread consumer([&] {
    while (!stop.load()) {
      consumed += pool.consume([&](uint8_t* p, size_t n) {
        REQUIRE(n == sizeof(size_t));
        size_t tag;
        std::memcpy(&tag, p, sizeof tag);
        tags.insert(tag);
      });
    }
  });
  for (auto& t : lenders)
    t.join();
  stop = true;
  consumer.join();
  consumed += pool.consume([&](uint8_t* p, size_t) {
    size_t tag;
    std::memcpy(&tag, p, sizeof tag);
    tags.insert(tag);
  });
  CHECK(completed == 4u * kPerThread);
  CHECK(consumed == completed.load());
  CHECK(tags.size() == completed.load()); // no buffer handed over twice
  CHECK(pool.exhausted() == refused.load());
}
