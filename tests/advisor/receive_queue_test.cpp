// The ingest's receive queue: bounded in bytes, fair by connection. A connection that floods the
// advisor loses its own newest messages when the queue is full, never those of a connection that
// sends at a normal pace, and pop() serves the connections in turn.
#include "advisor/ingest/receive_queue.h"

#include <catch2/catch.hpp>

#include <vector>

using gpuwise::advisor::ReceiveQueue;
using namespace std::chrono_literals;

namespace {

std::vector<uint8_t> message(uint8_t tag, size_t size) {
  std::vector<uint8_t> m(size, tag);
  return m;
}

// Every message left, in pop() order, by its first byte.
std::vector<uint8_t> drain(ReceiveQueue& q) {
  std::vector<uint8_t> tags;
  while (auto m = q.pop(0ms))
    tags.push_back(m->empty() ? 0 : (*m)[0]);
  return tags;
}

} // namespace

TEST_CASE("receive queue: one source is first in, first out") {
  ReceiveQueue q(100, 0, 0);
  for (uint8_t t = 1; t <= 5; ++t)
    REQUIRE(q.push(message(t, 10), 7));
  CHECK(drain(q) == std::vector<uint8_t>{1, 2, 3, 4, 5});
  CHECK(q.takeDropped() == 0);
}

TEST_CASE("receive queue: sources are served in turn, each in its own order") {
  ReceiveQueue q(1000, 0, 0);
  for (uint8_t t : {11, 12, 13, 14})
    REQUIRE(q.push(message(t, 10), 3)); // a busy connection
  REQUIRE(q.push(message(21, 10), 9));  // a quiet one, after it
  REQUIRE(q.push(message(22, 10), 9));
  CHECK(drain(q) == std::vector<uint8_t>{11, 21, 12, 22, 13, 14});
}

TEST_CASE("receive queue: when full, the flooding source loses its newest, the quiet one nothing") {
  ReceiveQueue q(100, 0, 0);
  for (uint8_t t = 1; t <= 10; ++t)
    REQUIRE(q.push(message(t, 10), 1)); // the flood fills the queue
  // More from the flood: dropped, it holds the most.
  CHECK_FALSE(q.push(message(11, 10), 1));
  CHECK(q.takeDropped() == 1);
  // A quiet connection's message gets in: the flood's newest makes room.
  REQUIRE(q.push(message(50, 10), 2));
  REQUIRE(q.push(message(51, 20), 2));
  CHECK(q.takeDropped() == 3); // 10, 9 and 8 of the flood
  CHECK(drain(q) == std::vector<uint8_t>{1, 50, 2, 51, 3, 4, 5, 6, 7});
}

TEST_CASE("receive queue: a source never takes from a lighter one") {
  ReceiveQueue q(100, 0, 0);
  for (uint8_t t = 1; t <= 5; ++t)
    REQUIRE(q.push(message(t, 10), 1));
  for (uint8_t t = 21; t <= 25; ++t)
    REQUIRE(q.push(message(t, 10), 2));
  // Full, both at 50 bytes: the next from either is its own loss.
  CHECK_FALSE(q.push(message(6, 10), 1));
  CHECK_FALSE(q.push(message(26, 10), 2));
  CHECK(q.takeDropped() == 2);
  CHECK(drain(q).size() == 10);
}

TEST_CASE("receive queue: small messages keep their reserve beyond the bound") {
  ReceiveQueue q(100, 16, 40);
  REQUIRE(q.push(message(1, 100), 1)); // a large message fills the bound
  CHECK_FALSE(q.push(message(2, 50), 1));
  REQUIRE(q.push(message(3, 16), 1)); // small: the reserve
  REQUIRE(q.push(message(4, 16), 1));
  CHECK_FALSE(q.push(message(5, 16), 1)); // the reserve is spent too
  CHECK(q.takeDropped() == 2);
  CHECK(drain(q) == std::vector<uint8_t>{1, 3, 4});
}

TEST_CASE("receive queue: a message larger than the whole bound is dropped, the queue kept") {
  ReceiveQueue q(100, 0, 0);
  REQUIRE(q.push(message(1, 60), 1));
  CHECK_FALSE(q.push(message(2, 200), 2));
  CHECK(q.takeDropped() == 1);
  CHECK(drain(q) == std::vector<uint8_t>{1});
}

TEST_CASE("receive queue: close wakes a waiting pop and refuses more") {
  ReceiveQueue q(100, 0, 0);
  q.close();
  CHECK_FALSE(q.pop(10s)); // returns at once: closed and empty
  CHECK_FALSE(q.push(message(1, 1), 1));
}
