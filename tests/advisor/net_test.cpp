// ConnectionGuard (advisor/net/connection_guard.h) on socket pairs: the per-client and total caps,
// idle connections closed first to make room, refusals when none is idle, and closeAll.
#include "advisor/net/connection_guard.h"

#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <unistd.h>

using namespace gpuwise::advisor;

namespace {

// One connection: the server's end (what the guard sees) and the client's.
struct Pair {
  int server = -1, client = -1;
  Pair() {
    int fds[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0);
    server = fds[0];
    client = fds[1];
  }
  ~Pair() {
    ::close(server);
    ::close(client);
  }
  // True once the server's end was shut down: the client reads end-of-stream.
  bool shutDown() const {
    char byte;
    return ::recv(client, &byte, 1, MSG_DONTWAIT) == 0;
  }
};

ConnectionLimits limits(size_t per_client, size_t total) {
  ConnectionLimits l;
  l.max_per_client = per_client;
  l.max_connections = total;
  return l;
}

} // namespace

TEST_CASE("net: a client over its cap is refused unless one of its connections is idle") {
  std::vector<std::string> log;
  ConnectionGuard guard(limits(2, 100), [&](const std::string& l) { log.push_back(l); });
  Pair a, b, c, d;
  CHECK(guard.admit(a.server));
  CHECK(guard.admit(b.server));
  CHECK_FALSE(guard.admit(c.server)); // socket pairs share one address ("localhost")
  REQUIRE(log.size() == 1);
  INFO(log[0]);
  CHECK(log[0].find("refused a connection from localhost: it holds 2") == 0);
  // An idle connection makes room: it is shut down, the new one admitted.
  guard.setIdle(b.server, true);
  CHECK(guard.admit(c.server));
  CHECK(b.shutDown());
  CHECK_FALSE(a.shutDown());
  CHECK_FALSE(guard.admit(d.server));
  auto s = guard.stats();
  CHECK(s.admitted == 3);
  CHECK(s.refused == 2);
  CHECK(s.evicted == 1);
  CHECK(s.open == 2);
  CHECK(log.size() == 1); // refusals are logged at most once per 10 s
  guard.release(b.server);
  CHECK(guard.stats().open == 2); // an evicted connection was no longer counted
  guard.release(a.server);
  CHECK(guard.admit(d.server));
}

TEST_CASE("net: the total cap closes the longest-idle connection first") {
  ConnectionGuard guard(limits(100, 3));
  Pair a, b, c, d, e;
  for (const Pair* p : {&a, &b, &c})
    REQUIRE(guard.admit(p->server));
  guard.setIdle(c.server, true);
  guard.setIdle(a.server, true); // idle since later than c
  CHECK(guard.admit(d.server));
  CHECK(c.shutDown());
  CHECK_FALSE(a.shutDown());
  guard.setIdle(a.server, false); // busy again: nothing left to close
  CHECK_FALSE(guard.admit(e.server));
}

TEST_CASE("net: closeAll shuts every connection down and refuses new ones") {
  ConnectionGuard guard(limits(10, 10));
  Pair a, b;
  REQUIRE(guard.admit(a.server));
  guard.closeAll();
  CHECK(a.shutDown());
  CHECK_FALSE(guard.admit(b.server));
}

TEST_CASE("net: the elastic task queue runs tasks at once, each on a thread of its own") {
  ElasticTaskQueue queue(8);
  std::mutex m;
  std::condition_variable cv;
  int started = 0;
  bool release = false;
  // Eight tasks that block until all eight run: with fewer threads they would never all start.
  for (int i = 0; i < 8; ++i)
    queue.enqueue([&] {
      std::unique_lock lock(m);
      ++started;
      cv.notify_all();
      cv.wait(lock, [&] { return release; });
    });
  {
    std::unique_lock lock(m);
    REQUIRE(cv.wait_for(lock, std::chrono::seconds(30), [&] { return started == 8; }));
    release = true;
    cv.notify_all();
  }
  queue.shutdown();
  CHECK(started == 8);
}
