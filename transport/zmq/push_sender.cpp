// PushSender: the shim's non-blocking PUSH socket (see endpoints.h).
#include "transport/zmq/endpoints.h"
#include "transport/zmq/zmq_monitor.h"

#include <zmq.h>

#include <atomic>
#include <cerrno>
#include <iterator>
#include <unistd.h>

namespace gpuwise::transport {
namespace {

// Reconnect quickly at first, backing off to a few seconds, so an advisor that starts late or
// restarts is found again soon without a busy loop.
constexpr int kReconnectIvlMs = 100;
constexpr int kReconnectIvlMaxMs = 2000;
// ZMTP heartbeats detect a peer that vanished without closing the connection (node lost), so
// the connection is dropped and re-established instead of filling the high-water mark forever.
constexpr int kHeartbeatIvlMs = 2000;
constexpr int kHeartbeatTimeoutMs = 6000;

bool setInt(void* socket, int option, int value) {
  return zmq_setsockopt(socket, option, &value, sizeof value) == 0;
}

} // namespace

struct PushSender::Impl {
  void* context = nullptr;
  void* socket = nullptr;
  void* monitor = nullptr;
  pid_t owner = 0;
  MonitorCounts counts;
  uint64_t handshakes_taken = 0;
  bool closed = false;

  bool forked() const { return getpid() != owner; }

  void release() {
    if (closed) return;
    closed = true;
    detachMonitor(socket, monitor);
    if (socket) zmq_close(socket); // ZMQ_LINGER bounds how long termination waits for the queue
    if (context) {
      while (zmq_ctx_term(context) != 0 && errno == EINTR) {
      }
    }
    socket = monitor = context = nullptr;
  }
};

PushSender::PushSender(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

PushSender::~PushSender() {
  if (impl_ && impl_->forked())
    abandon();
  else
    close();
}

Expected<std::unique_ptr<PushSender>> PushSender::connect(const std::string& endpoint,
                                                          const Options& options) {
  try {
    return connectImpl(endpoint, options);
  } catch (...) {                       // out of memory: no sender, the shim carries on without one
    return unexpected("out of memory"); // short enough not to allocate
  }
}

Expected<std::unique_ptr<PushSender>> PushSender::connectImpl(const std::string& endpoint,
                                                              const Options& options) {
  auto impl = std::make_unique<Impl>();
  impl->owner = getpid();
  auto fail = [&](const char* what) -> Expected<std::unique_ptr<PushSender>> {
    std::string why = endpoint + ": " + what + ": " + zmq_strerror(zmq_errno());
    impl->release();
    return unexpected(std::move(why));
  };
  impl->context = zmq_ctx_new();
  if (!impl->context) return fail("cannot create a ZeroMQ context");
  zmq_ctx_set(impl->context, ZMQ_IO_THREADS, 1);
  zmq_ctx_set(impl->context, ZMQ_BLOCKY, 0);
  impl->socket = zmq_socket(impl->context, ZMQ_PUSH);
  if (!impl->socket) return fail("cannot create a PUSH socket");
  if (!setInt(impl->socket, ZMQ_SNDHWM, options.send_hwm) ||
      !setInt(impl->socket, ZMQ_LINGER, options.linger_ms) ||
      !setInt(impl->socket, ZMQ_IMMEDIATE, 1) ||
      !setInt(impl->socket, ZMQ_RECONNECT_IVL, kReconnectIvlMs) ||
      !setInt(impl->socket, ZMQ_RECONNECT_IVL_MAX, kReconnectIvlMaxMs) ||
      !setInt(impl->socket, ZMQ_HEARTBEAT_IVL, kHeartbeatIvlMs) ||
      !setInt(impl->socket, ZMQ_HEARTBEAT_TIMEOUT, kHeartbeatTimeoutMs))
    return fail("cannot set socket options");
  // The monitor is attached before connecting so that the first handshake is seen.
  impl->monitor = attachMonitor(impl->context, impl->socket);
  if (!impl->monitor) return fail("cannot monitor the socket");
  if (zmq_connect(impl->socket, endpoint.c_str()) != 0) return fail("cannot connect");
  return std::unique_ptr<PushSender>(new PushSender(std::move(impl)));
}

SendResult PushSender::trySend(std::span<const uint8_t> message) {
  if (!impl_ || impl_->closed || impl_->forked()) return SendResult::Error;
  if (zmq_send(impl_->socket, message.data(), message.size(), ZMQ_DONTWAIT) >= 0)
    return SendResult::Sent;
  const int e = zmq_errno();
  return e == EAGAIN || e == EINTR ? SendResult::WouldBlock : SendResult::Error;
}

bool PushSender::takeReconnected() {
  if (!impl_ || impl_->closed || impl_->forked()) return false;
  drainMonitor(impl_->monitor, impl_->counts);
  if (impl_->counts.handshakes == impl_->handshakes_taken) return false;
  impl_->handshakes_taken = impl_->counts.handshakes;
  return true;
}

void PushSender::close() {
  if (!impl_) return;
  if (impl_->forked()) {
    abandon();
    return;
  }
  impl_->release();
}

namespace {
// Abandoned senders stay reachable from here: the leak is deliberate (see the header), and a leak
// checker should not mistake it for a bug. No allocation: safe in a forked child.
std::atomic<void*> g_abandoned[16];
std::atomic<unsigned> g_abandoned_count{0};
} // namespace

void PushSender::abandon() {
  Impl* impl = impl_.release();
  if (!impl) return;
  const unsigned slot = g_abandoned_count.fetch_add(1, std::memory_order_relaxed);
  if (slot < std::size(g_abandoned)) g_abandoned[slot].store(impl, std::memory_order_relaxed);
}

} // namespace gpuwise::transport
