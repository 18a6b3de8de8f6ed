// ZeroMQ endpoints over real sockets: loopback tcp with an OS-chosen port and ipc in a temporary
// directory. Waits poll a condition with a deadline; nothing sleeps for a fixed time.
#include "tests/transport/record_fixtures.h"
#include "transport/codec.h"
#include "transport/zmq/endpoints.h"

#include <atomic>
#include <csignal>
#include <filesystem>
#include <map>
#include <set>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace gpuwise;
using namespace gpuwise::transport;
using namespace gpuwise::transport::testing;
using namespace std::chrono_literals;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

template <class Cond> bool waitFor(Cond cond, std::chrono::milliseconds deadline = 10s) {
  const auto until = Clock::now() + deadline;
  while (!cond()) {
    if (Clock::now() > until) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

struct TempDir {
  fs::path path;
  TempDir() {
    static int n = 0;
    path = fs::temp_directory_path() /
           ("gw_zmq_" + std::to_string(getpid()) + "_" + std::to_string(n++));
  }
  ~TempDir() { fs::remove_all(path); }
};

std::unique_ptr<PullReceiver> bindOrFail(const std::string& ep, PullReceiver::Options o = {}) {
  auto r = PullReceiver::bind(ep, o);
  INFO((r ? std::string() : r.error().message));
  REQUIRE(r.has_value());
  return std::move(*r);
}
std::unique_ptr<PushSender> connectOrFail(const std::string& ep, PushSender::Options o = {}) {
  auto s = PushSender::connect(ep, o);
  INFO((s ? std::string() : s.error().message));
  REQUIRE(s.has_value());
  return std::move(*s);
}

std::vector<uint8_t> bytes(size_t n, uint8_t fill) {
  return std::vector<uint8_t>(n, fill);
}

// Sends `msg` and checks it arrives intact.
void roundTrip(PushSender& tx, PullReceiver& rx, const std::vector<uint8_t>& msg) {
  REQUIRE(waitFor([&] { return tx.trySend(msg) == SendResult::Sent; }));
  auto got = rx.receive(10s);
  REQUIRE(got);
  CHECK(*got == msg);
}

void pushPull(const std::string& bind_endpoint) {
  auto rx = bindOrFail(bind_endpoint);
  auto tx = connectOrFail(rx->endpoint());
  REQUIRE(waitFor([&] { return tx->takeReconnected(); }));
  CHECK_FALSE(tx->takeReconnected()); // once per connection

  // Real codec messages, decoded on the far side.
  model::NameTable names;
  BatchEncoder enc(names, 8, 9);
  model::NameTable rnames;
  MessageDecoder dec(rnames);
  for (int i = 0; i < 50; ++i) {
    model::KernelExec k;
    k.name = names.intern("kernel" + std::to_string(i % 5));
    k.start = 1000 + i;
    k.end = 2000 + i;
    enc.add(k);
    const auto msg = enc.encode(0, false, i);
    REQUIRE(tx->trySend(msg) == SendResult::Sent);
    enc.confirm(true);
  }
  for (int i = 0; i < 50; ++i) {
    auto got = rx->receive(10s);
    REQUIRE(got);
    Batch b = expectValue<Batch>(dec.decode(*got));
    CHECK(b.sequence == uint64_t(i)); // in order
    REQUIRE(b.kernels.size() == 1);
    CHECK(rnames.get(b.kernels[0].name) == "kernel" + std::to_string(i % 5));
  }
  CHECK_FALSE(rx->receive(0ms));
}

} // namespace

TEST_CASE("push/pull over tcp loopback with an OS-chosen port") {
  auto rx = bindOrFail("tcp://127.0.0.1:*");
  const std::string ep = rx->endpoint();
  CHECK(ep.rfind("tcp://127.0.0.1:", 0) == 0);
  CHECK(ep.find('*') == std::string::npos);
  CHECK(std::stoi(ep.substr(ep.rfind(':') + 1)) > 0);
  rx.reset();
  pushPull("tcp://127.0.0.1:*");
}

TEST_CASE("push/pull over ipc; the socket directory is 0700 and the socket 0600") {
  TempDir dir;
  const fs::path sock = dir.path / "run" / "advisor.sock"; // neither directory exists yet
  {
    auto rx = bindOrFail("ipc://" + sock.string());
    CHECK(rx->endpoint() == "ipc://" + sock.string());
    struct stat st {};
    REQUIRE(stat((dir.path / "run").c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0700);
    REQUIRE(stat(dir.path.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0700);
    REQUIRE(stat(sock.c_str(), &st) == 0);
    CHECK(S_ISSOCK(st.st_mode));
    CHECK((st.st_mode & 0777) == 0600);
  }
  pushPull("ipc://" + sock.string());
}

TEST_CASE("Each message names the connection it came in on") {
  const std::vector<std::string> endpoints{"tcp://127.0.0.1:*",
                                           "ipc://@gw-src-" + std::to_string(getpid())};
  for (const std::string& ep : endpoints) {
    INFO(ep);
    auto rx = bindOrFail(ep);
    auto a = connectOrFail(rx->endpoint());
    auto b = connectOrFail(rx->endpoint());
    REQUIRE(waitFor([&] { return a->takeReconnected(); })); // true once per connection
    REQUIRE(waitFor([&] { return b->takeReconnected(); }));
    for (int i = 0; i < 3; ++i) {
      REQUIRE(waitFor([&] { return a->trySend(bytes(8, 0xa)) == SendResult::Sent; }));
      REQUIRE(waitFor([&] { return b->trySend(bytes(8, 0xb)) == SendResult::Sent; }));
    }
    std::map<uint8_t, std::set<int>> sources; // by sender: the sources its messages carried
    for (int i = 0; i < 6; ++i) {
      int source = -2;
      auto got = rx->receive(10s, &source);
      REQUIRE(got);
      sources[(*got)[0]].insert(source);
    }
    REQUIRE(sources.size() == 2);
    REQUIRE(sources[0xa].size() == 1); // one connection, one source
    REQUIRE(sources[0xb].size() == 1);
    CHECK(*sources[0xa].begin() >= 0);
    CHECK(*sources[0xb].begin() >= 0);
    CHECK(*sources[0xa].begin() != *sources[0xb].begin());
  }
}

TEST_CASE("No peer: trySend is WouldBlock at once") {
  // A port that was just closed has no listener.
  auto rx = bindOrFail("tcp://127.0.0.1:*");
  const std::string ep = rx->endpoint();
  rx.reset();
  TempDir dir;
  for (const std::string& target : {ep, "ipc://" + (dir.path / "nobody.sock").string()}) {
    auto tx = connectOrFail(target);
    const auto msg = bytes(1000, 1);
    auto worst = Clock::duration::zero();
    for (int i = 0; i < 200; ++i) {
      const auto t0 = Clock::now();
      REQUIRE(tx->trySend(msg) == SendResult::WouldBlock);
      worst = std::max(worst, Clock::now() - t0);
    }
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(worst).count();
    WARN("no peer (" << target << "): slowest trySend " << us << " us");
    CHECK(worst < 20ms);
    CHECK_FALSE(tx->takeReconnected());
  }
}

TEST_CASE("A stalled peer: sends turn to WouldBlock at the high-water mark, and never block") {
  PullReceiver::Options ro;
  ro.receive_hwm = 2;
  auto rx = bindOrFail("tcp://127.0.0.1:*", ro);
  PushSender::Options so;
  so.send_hwm = 4;
  auto tx = connectOrFail(rx->endpoint(), so);
  REQUIRE(waitFor([&] { return tx->takeReconnected(); }));

  const auto msg = bytes(256 * 1024, 7);
  auto worst = Clock::duration::zero();
  auto timedSend = [&] {
    const auto t0 = Clock::now();
    const SendResult r = tx->trySend(msg);
    worst = std::max(worst, Clock::now() - t0);
    return r;
  };
  // ZeroMQ's I/O thread keeps moving queued messages into the kernel's socket buffers, so the
  // first WouldBlock can be followed by a few more successes; the peer counts as saturated when
  // sends have kept failing for 300 consecutive tries, 1 ms apart.
  int sent = 0, first_would_block = -1, failing = 0;
  const bool saturated = waitFor(
      [&] {
        const SendResult r = timedSend();
        REQUIRE(r != SendResult::Error);
        if (r == SendResult::Sent) {
          ++sent;
          failing = 0;
        } else {
          if (first_would_block < 0) first_would_block = sent;
          ++failing;
        }
        return failing >= 300;
      },
      30s);
  REQUIRE(saturated);
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(worst).count();
  WARN("stalled peer: first WouldBlock after "
       << first_would_block << " sends of 256 KiB, saturated after " << sent << "; slowest trySend "
       << us << " us");
  // What can be queued is bounded: the two high-water marks plus the kernel's socket buffers.
  CHECK(sent < 400);
  CHECK(worst < 50ms);

  // Once the advisor reads again, the queue drains and sends go through.
  size_t received = 0;
  REQUIRE(waitFor([&] {
    while (rx->receive(0ms))
      ++received;
    return tx->trySend(msg) == SendResult::Sent;
  }));
  CHECK(received > 0);
}

TEST_CASE("Reconnection is detected when the receiver comes back at the same endpoint") {
  TempDir dir;
  std::string first = "tcp://127.0.0.1:*";
  for (const std::string& where : {first, "ipc://" + (dir.path / "adv.sock").string()}) {
    auto rx = bindOrFail(where);
    const std::string ep = rx->endpoint();
    auto tx = connectOrFail(ep);
    REQUIRE(waitFor([&] { return tx->takeReconnected(); }));
    roundTrip(*tx, *rx, bytes(100, 1));

    rx.reset(); // the advisor goes away
    REQUIRE(waitFor([&] { return tx->trySend(bytes(10, 2)) == SendResult::WouldBlock; }));
    CHECK_FALSE(tx->takeReconnected());

    rx = bindOrFail(ep); // and comes back
    REQUIRE(waitFor([&] { return tx->takeReconnected(); }));
    CHECK_FALSE(tx->takeReconnected());
    roundTrip(*tx, *rx, bytes(100, 3));
  }
}

TEST_CASE("Messages over the receiver's size limit are dropped by ZeroMQ") {
  PullReceiver::Options ro;
  ro.max_message_bytes = 1000;
  auto rx = bindOrFail("tcp://127.0.0.1:*", ro);
  auto tx = connectOrFail(rx->endpoint());
  REQUIRE(waitFor([&] { return tx->takeReconnected(); }));
  REQUIRE(tx->trySend(bytes(5000, 9)) == SendResult::Sent);
  CHECK_FALSE(rx->receive(300ms)); // the receiver cut the connection instead
  REQUIRE(waitFor([&] { return tx->takeReconnected(); })); // which the sender sees as a new epoch
  roundTrip(*tx, *rx, bytes(500, 4));
}

TEST_CASE("close() from another thread ends a blocked receive") {
  auto rx = bindOrFail("tcp://127.0.0.1:*");
  std::atomic<bool> started{false}, done{false};
  Clock::duration took{};
  std::thread reader([&] {
    started = true;
    const auto t0 = Clock::now();
    auto got = rx->receive(60s);
    took = Clock::now() - t0;
    CHECK_FALSE(got);
    done = true;
  });
  REQUIRE(waitFor([&] { return started.load(); }));
  rx->close();
  const bool finished = waitFor([&] { return done.load(); }, 10s);
  reader.join();
  CHECK(finished);
  CHECK(took < 10s);
  CHECK_FALSE(rx->receive(0ms));
  rx->close(); // twice is fine
}

TEST_CASE("Closed and abandoned senders") {
  auto rx = bindOrFail("tcp://127.0.0.1:*");
  auto tx = connectOrFail(rx->endpoint());
  tx->close();
  CHECK(tx->trySend(bytes(10, 1)) == SendResult::Error);
  CHECK_FALSE(tx->takeReconnected());
  tx->close();

  auto tx2 = connectOrFail(rx->endpoint());
  REQUIRE(waitFor([&] { return tx2->takeReconnected(); }));
  tx2->abandon(); // leaks the context on purpose
  CHECK(tx2->trySend(bytes(10, 1)) == SendResult::Error);
}

TEST_CASE("A forked child drops its inherited sender without touching the parent's context") {
  auto rx = bindOrFail("tcp://127.0.0.1:*");
  auto tx = connectOrFail(rx->endpoint());
  REQUIRE(waitFor([&] { return tx->takeReconnected(); }));
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // In the child: sends fail cleanly, close() and the destructor abandon instead of closing.
    int code = tx->trySend(bytes(10, 1)) == SendResult::Error ? 0 : 1;
    if (tx->takeReconnected()) code = 2;
    tx->close();
    tx.reset();
    _exit(code);
  }
  int status = 0;
  const bool exited = waitFor([&] { return waitpid(child, &status, WNOHANG) == child; }, 20s);
  if (!exited) {
    kill(child, SIGKILL);
    waitpid(child, &status, 0);
  }
  REQUIRE(exited);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  roundTrip(*tx, *rx, bytes(64, 5)); // the parent's sender is unaffected
}

TEST_CASE("Malformed endpoints are errors, not exceptions") {
  auto bogus = PushSender::connect("bogus://nowhere", {});
  REQUIRE_FALSE(bogus.has_value());
  CHECK(bogus.error().message.find("bogus://nowhere") != std::string::npos);
  auto bad_address = PullReceiver::bind("tcp://999.1.1.1:5", {});
  REQUIRE_FALSE(bad_address.has_value());
  CHECK(!bad_address.error().message.empty());
  auto bad_path = PullReceiver::bind("ipc:///proc/nope/x.sock", {});
  REQUIRE_FALSE(bad_path.has_value());
  CHECK(!bad_path.error().message.empty());
}
