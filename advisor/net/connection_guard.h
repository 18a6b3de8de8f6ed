// What keeps slow, idle or numerous clients of the advisor's HTTP endpoints (/metrics, the
// admission webhook) from taking the server from everyone else.
//
// cpp-httplib serves connections on a fixed pool of threads (8 here), and its read timeout
// restarts with every byte: a client sending a byte a second holds a thread for good, eight such
// clients stop the server, and idle keep-alive connections queue new ones behind them. The
// guarded servers (guarded_http_server.h) serve each connection on a thread of its own from an
// ElasticTaskQueue and keep every connection in a ConnectionGuard, which enforces:
//  - at most `max_connections` at once, at most `max_per_client` from one client address; at
//    either cap the connection that has waited longest between requests (idle) is closed to make
//    room, and when none is idle the new connection is closed at once;
//  - deadlines (ConnectionLimits) that the streams of guarded_http_server.h apply to each read
//    and write.
//
// Thread-safe: every member may be called from any connection thread and the listener thread.
#pragma once

#include <httplib.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace gpuwise::advisor {

struct ConnectionLimits {
  // A request (the TLS handshake too) must arrive whole, head and body, within this time of its
  // first byte. A well-behaved client sends a request at once; the API server gives a webhook
  // 5 s in all (timeoutSeconds), so a slower request is of no use to anyone.
  std::chrono::milliseconds request_deadline{5000};
  // How long a connection may wait for its next request (keep-alive) before it is closed.
  std::chrono::milliseconds idle_timeout{10000};
  // All of a response must be written within this time of its first byte.
  std::chrono::milliseconds write_timeout{10000};
  size_t max_connections = 256;
  size_t max_per_client = 16;
  size_t max_requests_per_connection = 100;
};

class ConnectionGuard {
public:
  // `log`: one line per refusal, at most one line per 10 s (a flood must not flood the log).
  // max_connections is lowered to what the process's descriptor limit allows.
  explicit ConnectionGuard(ConnectionLimits limits,
                           std::function<void(const std::string&)> log = nullptr);

  const ConnectionLimits& limits() const { return limits_; }

  // Registers an accepted socket; false when it must be closed at once (over a cap, or
  // stopping). An admitted socket must be released before it is closed.
  bool admit(socket_t sock);
  void release(socket_t sock);
  // Marks the connection as waiting for its next request (closable to make room) or not.
  void setIdle(socket_t sock, bool idle);
  // Refuses new connections and shuts down every admitted one (their threads then end).
  void closeAll();

  struct Stats {
    uint64_t admitted = 0, refused = 0, evicted = 0;
    size_t open = 0;
  };
  Stats stats() const;

private:
  // `limits` with max_connections lowered to fit RLIMIT_NOFILE.
  static ConnectionLimits withinDescriptorLimit(ConnectionLimits limits);

  struct Connection {
    std::string client;
    bool idle = false;
    bool evicted = false; // shut down to make room; no longer counted
    std::chrono::steady_clock::time_point idle_since{};
  };
  // Shuts down the longest-idle connection (of `client`, or of anyone when nullptr); false when
  // none is idle. Called with mutex_ held.
  bool evictIdle(const std::string* client);
  void forget(Connection& c);
  void noteRefusal(const std::string& why);

  const ConnectionLimits limits_;
  const std::function<void(const std::string&)> log_;
  mutable std::mutex mutex_;
  std::unordered_map<socket_t, Connection> connections_;
  std::unordered_map<std::string, size_t> per_client_;
  size_t counted_ = 0;
  bool stopping_ = false;
  Stats stats_;
  std::chrono::steady_clock::time_point next_log_{};
};

// The client address of a connected socket ("10.0.0.7", "::1"), or "" when unknown.
std::string peerAddress(socket_t sock);

// An httplib task queue that runs each task at once on a thread of its own: idle threads are
// reused, new ones started up to `max_threads` (then tasks wait), and threads idle for a while end.
class ElasticTaskQueue : public httplib::TaskQueue {
public:
  explicit ElasticTaskQueue(size_t max_threads) : max_threads_(max_threads) {}
  ~ElasticTaskQueue() override;
  void enqueue(std::function<void()> fn) override;
  void shutdown() override;

private:
  void work();
  void joinFinished(std::unique_lock<std::mutex>& lock);

  const size_t max_threads_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;
  std::list<std::thread> threads_;
  std::vector<std::thread::id> finished_;
  size_t idle_ = 0;
  bool shutdown_ = false;
};

} // namespace gpuwise::advisor
