#include "advisor/net/guarded_http_server.h"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <fcntl.h>
#include <netdb.h>
#include <optional>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace gpuwise::advisor {

namespace {

using Clock = std::chrono::steady_clock;

// Waits until `sock` is ready for `events` or `deadline` passes; true when ready (a hang-up or an
// error counts as ready: the read or write that follows reports it).
bool waitFor(socket_t sock, short events, Clock::time_point deadline) {
  for (;;) {
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    pollfd p{sock, events, 0};
    int r = ::poll(&p, 1, static_cast<int>(std::clamp<long long>(left, 0, INT_MAX)));
    if (r > 0) return true;
    if (r == 0 || errno != EINTR) return false;
  }
}

void setNonBlocking(socket_t sock) {
  int flags = ::fcntl(sock, F_GETFL, 0);
  if (flags >= 0) ::fcntl(sock, F_SETFL, flags | O_NONBLOCK);
}

void socketAddress(socket_t sock, bool peer, std::string& ip, int& port) {
  sockaddr_storage addr{};
  socklen_t length = sizeof addr;
  auto* a = reinterpret_cast<sockaddr*>(&addr);
  int rc = peer ? ::getpeername(sock, a, &length) : ::getsockname(sock, a, &length);
  char host[NI_MAXHOST], service[NI_MAXSERV];
  if (rc != 0 || ::getnameinfo(a, length, host, sizeof host, service, sizeof service,
                               NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return;
  ip = host;
  port = std::atoi(service);
}

// A connection's byte stream with the guard's deadlines: reads fail once the request's deadline
// has passed, writes once the response's has. Non-blocking socket underneath.
class DeadlineStream : public httplib::Stream {
public:
  DeadlineStream(socket_t sock, const ConnectionLimits& limits) : sock_(sock), limits_(limits) {}

  // Waits (idle) for the first byte of the next request until `until`.
  virtual bool waitForRequest(Clock::time_point until) { return waitFor(sock_, POLLIN, until); }
  void startRequest() {
    read_deadline_ = Clock::now() + limits_.request_deadline;
    write_deadline_.reset();
  }

  bool is_readable() const override { return waitFor(sock_, POLLIN, read_deadline_); }
  bool is_writable() const override { return waitFor(sock_, POLLOUT, writeDeadline()); }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    socketAddress(sock_, true, ip, port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    socketAddress(sock_, false, ip, port);
  }
  socket_t socket() const override { return sock_; }

protected:
  Clock::time_point writeDeadline() const {
    if (!write_deadline_) write_deadline_ = Clock::now() + limits_.write_timeout;
    return *write_deadline_;
  }

  const socket_t sock_;
  const ConnectionLimits& limits_;
  Clock::time_point read_deadline_ = Clock::now();
  mutable std::optional<Clock::time_point> write_deadline_;
};

class PlainStream final : public DeadlineStream {
public:
  using DeadlineStream::DeadlineStream;

  ssize_t read(char* ptr, size_t size) override {
    for (;;) {
      ssize_t n = ::recv(sock_, ptr, size, 0);
      if (n >= 0) return n;
      if (errno == EINTR) continue;
      if ((errno != EAGAIN && errno != EWOULDBLOCK) || !waitFor(sock_, POLLIN, read_deadline_))
        return -1;
    }
  }
  ssize_t write(const char* ptr, size_t size) override {
    for (;;) {
      ssize_t n = ::send(sock_, ptr, size, MSG_NOSIGNAL);
      if (n >= 0) return n;
      if (errno == EINTR) continue;
      if ((errno != EAGAIN && errno != EWOULDBLOCK) || !waitFor(sock_, POLLOUT, writeDeadline()))
        return -1;
    }
  }
};

// Drives a non-blocking SSL operation (`op` returns SSL_read/SSL_write/SSL_accept's result) to
// completion or until `deadline`; the operation's result, or -1.
template <typename Op> int untilDone(SSL* ssl, socket_t sock, Clock::time_point deadline, Op op) {
  for (;;) {
    ERR_clear_error();
    int n = op();
    if (n > 0) return n;
    switch (SSL_get_error(ssl, n)) {
    case SSL_ERROR_WANT_READ:
      if (!waitFor(sock, POLLIN, deadline)) return -1;
      break;
    case SSL_ERROR_WANT_WRITE:
      if (!waitFor(sock, POLLOUT, deadline)) return -1;
      break;
    case SSL_ERROR_ZERO_RETURN: return 0; // the client closed the TLS session
    default: return -1;
    }
  }
}

class TlsStream final : public DeadlineStream {
public:
  TlsStream(socket_t sock, SSL* ssl, const ConnectionLimits& limits)
      : DeadlineStream(sock, limits), ssl_(ssl) {}

  bool waitForRequest(Clock::time_point until) override {
    return SSL_has_pending(ssl_) || DeadlineStream::waitForRequest(until);
  }
  bool is_readable() const override {
    return SSL_pending(ssl_) > 0 || DeadlineStream::is_readable();
  }
  ssize_t read(char* ptr, size_t size) override {
    int length = static_cast<int>(std::min<size_t>(size, INT_MAX));
    return untilDone(ssl_, sock_, read_deadline_, [&] { return SSL_read(ssl_, ptr, length); });
  }
  ssize_t write(const char* ptr, size_t size) override {
    int length = static_cast<int>(std::min<size_t>(size, INT_MAX));
    return untilDone(ssl_, sock_, writeDeadline(), [&] { return SSL_write(ssl_, ptr, length); });
  }

private:
  SSL* const ssl_;
};

// Requests on one connection until it closes, fails, goes idle too long or is shut down by the
// guard. `handle` is httplib's process_request.
template <typename Handle>
void serveRequests(ConnectionGuard& guard, socket_t sock, DeadlineStream& stream, Handle handle) {
  const ConnectionLimits& limits = guard.limits();
  for (size_t n = 0; n < limits.max_requests_per_connection; ++n) {
    guard.setIdle(sock, true);
    bool ready = stream.waitForRequest(Clock::now() + limits.idle_timeout);
    guard.setIdle(sock, false);
    if (!ready) return;
    stream.startRequest();
    bool closed = false;
    bool last = n + 1 == limits.max_requests_per_connection;
    if (!handle(stream, last, closed) || closed) return;
  }
}

void closeSocket(socket_t sock) {
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
}

// After httplib bound the socket: a backlog for bursts (httplib listens with 5, and a burst of
// connections beyond it has its SYNs dropped and retried a second later).
int widenBacklog(bool bound, int port, socket_t listening) {
  if (!bound || port <= 0) return 0;
  ::listen(listening, SOMAXCONN);
  return port;
}

} // namespace

GuardedServer::GuardedServer(ConnectionLimits limits, NetLog log) : guard_(limits, std::move(log)) {
  size_t threads = guard_.limits().max_connections + kRefusalThreads;
  new_task_queue = [threads] { return new ElasticTaskQueue(threads); };
}

int GuardedServer::bindGuarded(const std::string& host, int port) {
  if (port == 0) {
    int bound = bind_to_any_port(host);
    return widenBacklog(bound > 0, bound, svr_sock_);
  }
  return widenBacklog(bind_to_port(host, port), port, svr_sock_);
}

void GuardedServer::stopAll() {
  stop();
  guard_.closeAll();
}

bool GuardedServer::process_and_close_socket(socket_t sock) {
  if (guard_.admit(sock)) {
    setNonBlocking(sock);
    PlainStream stream(sock, guard_.limits());
    serveRequests(guard_, sock, stream, [this](httplib::Stream& s, bool last, bool& closed) {
      return process_request(s, last, closed, nullptr);
    });
    guard_.release(sock);
  }
  closeSocket(sock);
  return true;
}

GuardedSslServer::GuardedSslServer(const std::function<bool(SSL_CTX&)>& setup_ssl_ctx,
                                   ConnectionLimits limits, NetLog log)
    : httplib::SSLServer(setup_ssl_ctx), guard_(limits, std::move(log)) {
  size_t threads = guard_.limits().max_connections + kRefusalThreads;
  new_task_queue = [threads] { return new ElasticTaskQueue(threads); };
}

int GuardedSslServer::bindGuarded(const std::string& host, int port) {
  if (port == 0) {
    int bound = bind_to_any_port(host);
    return widenBacklog(bound > 0, bound, svr_sock_);
  }
  return widenBacklog(bind_to_port(host, port), port, svr_sock_);
}

void GuardedSslServer::stopAll() {
  stop();
  guard_.closeAll();
}

bool GuardedSslServer::process_and_close_socket(socket_t sock) {
  if (guard_.admit(sock)) {
    const ConnectionLimits& limits = guard_.limits();
    setNonBlocking(sock);
    // Before the ClientHello's first byte the connection is idle; from it, the handshake has the
    // request deadline, like any request.
    guard_.setIdle(sock, true);
    bool hello = waitFor(sock, POLLIN, Clock::now() + limits.idle_timeout);
    guard_.setIdle(sock, false);
    SSL* ssl = hello ? SSL_new(ssl_context()) : nullptr;
    if (ssl && SSL_set_fd(ssl, sock) == 1) {
      auto deadline = Clock::now() + limits.request_deadline;
      if (untilDone(ssl, sock, deadline, [&] { return SSL_accept(ssl); }) == 1) {
        TlsStream stream(sock, ssl, limits);
        serveRequests(guard_, sock, stream, [this](httplib::Stream& s, bool last, bool& closed) {
          return process_request(s, last, closed, nullptr);
        });
        SSL_shutdown(ssl); // one close_notify, not waited for: the socket is closed next
      }
    }
    if (ssl) SSL_free(ssl);
    guard_.release(sock);
  }
  closeSocket(sock);
  return true;
}

} // namespace gpuwise::advisor
