// cpp-httplib servers, plain and TLS, that slow, idle or numerous clients cannot take from
// everyone else: the advisor's /metrics and the admission webhook.
//
// They replace how httplib serves an accepted connection (routes, handlers and everything else
// are httplib's):
//  - each connection runs on a thread of its own (ElasticTaskQueue, at most
//    max_connections + kRefusalThreads), so a slow client holds nothing but its own connection;
//  - ConnectionGuard (connection_guard.h) caps connections in all and per client address,
//    closing idle keep-alive connections first to make room;
//  - waiting for a request (the TLS ClientHello included) is idle: at most idle_timeout;
//  - from its first byte, a request must arrive whole (the TLS handshake, then head and body)
//    within request_deadline, however steadily its bytes trickle in;
//  - a response must be written whole within write_timeout of its first byte;
//  - the listen backlog is SOMAXCONN, not httplib's 5, so a burst of connections is not dropped.
//
// Use: construct, set routes, bindGuarded(), listen_after_bind() on a thread of its own; from any
// other thread stopAll() ends it (every connection is shut down, listen_after_bind() returns).
#pragma once

#include "advisor/net/connection_guard.h"

#include <httplib.h>

#include <functional>
#include <string>

namespace gpuwise::advisor {

// Threads beyond one per admitted connection: they run refusals of connections over a cap, which
// take microseconds, so a flood of those never waits behind the connections being served.
inline constexpr size_t kRefusalThreads = 32;

using NetLog = std::function<void(const std::string&)>;

class GuardedServer : public httplib::Server {
public:
  explicit GuardedServer(ConnectionLimits limits, NetLog log = nullptr);
  // Binds `host`:`port` (0: any free port); the port bound, or 0 when it cannot be bound.
  int bindGuarded(const std::string& host, int port);
  void stopAll();
  ConnectionGuard::Stats connectionStats() const { return guard_.stats(); }

private:
  bool process_and_close_socket(socket_t sock) override;
  ConnectionGuard guard_;
};

class GuardedSslServer : public httplib::SSLServer {
public:
  GuardedSslServer(const std::function<bool(SSL_CTX&)>& setup_ssl_ctx, ConnectionLimits limits,
                   NetLog log = nullptr);
  int bindGuarded(const std::string& host, int port);
  void stopAll();
  ConnectionGuard::Stats connectionStats() const { return guard_.stats(); }

private:
  bool process_and_close_socket(socket_t sock) override;
  ConnectionGuard guard_;
};

} // namespace gpuwise::advisor
