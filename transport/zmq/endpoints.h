// ZeroMQ endpoints. Only this folder includes ZeroMQ headers.
//
// PushSender lives on the shim's drain thread and never blocks: sends use ZMQ_DONTWAIT,
// ZMQ_IMMEDIATE (nothing is queued for a peer that is not connected) and a bounded high-water
// mark, so an absent, dead or stalled advisor turns into a counted drop, never a stalled training
// job. PullReceiver lives on the advisor's ingest thread.
//
// Each endpoint owns its own ZeroMQ context (one I/O thread), so a sender inside the training
// process shares nothing with the application's own ZeroMQ use, and a forked child can drop its
// inherited copy without touching it. Neither class throws out of any method.
//
// The connection epoch protocol, on the drain thread:
//   if (sender->takeReconnected()) { encoder.resetEpoch(); send encodeHello(...) until Sent; }
//   auto msg = encoder.encode(...); encoder.confirm(sender->trySend(msg) == SendResult::Sent);
#pragma once

#include "profiler/model/expected.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace gpuwise::transport {

enum class SendResult { Sent, WouldBlock, Error };

class PushSender {
public:
  struct Options {
    int send_hwm = 64;   // messages queued before sends would block (then dropped)
    int linger_ms = 200; // how long close() may wait to flush queued messages at exit
  };
  // Connects (asynchronously) to `endpoint`; an error naming it when the endpoint is malformed.
  // An advisor that is not there yet is not an error.
  static Expected<std::unique_ptr<PushSender>> connect(const std::string& endpoint,
                                                       const Options& options);
  ~PushSender();

  // Never blocks. WouldBlock: no connected peer, or the peer's queue is at the high-water mark.
  // Error after close()/abandon(), in a forked child, or on a ZeroMQ error.
  SendResult trySend(std::span<const uint8_t> message);
  // True once for each (re)connection to a peer since the previous call (a completed ZMTP
  // handshake, seen through a socket monitor), including the first: the caller then starts a new
  // connection epoch (Hello again, names and signatures again). Never blocks. libzmq attaches the
  // new pipe before it reports the handshake, so the next trySend normally reaches the new peer;
  // under command throttling it can still say WouldBlock once, hence "send Hello until Sent".
  bool takeReconnected();
  // Closes the socket and the context, waiting at most linger_ms for queued messages. In a forked
  // child it abandons instead (see abandon()).
  void close();
  // Drops the sender without closing anything: the ZeroMQ context and sockets are leaked on
  // purpose. For a forked child, where the inherited context belongs to the parent's I/O thread
  // (which does not exist in the child) and zmq_ctx_term can hang. Safe in any process.
  void abandon();

private:
  struct Impl;
  explicit PushSender(std::unique_ptr<Impl>);
  static Expected<std::unique_ptr<PushSender>> connectImpl(const std::string&, const Options&);
  std::unique_ptr<Impl> impl_;
};

class PullReceiver {
public:
  struct Options {
    // Messages queued per connection. With max_message_bytes this bounds what one connection can
    // make the advisor buffer. A batch is every 50 ms, so 100 is 5 s of backlog: enough to ride
    // out a slow analysis of a window, while 300 large messages from one peer no longer sit in
    // memory (past it, the peer's own queue fills and its sends say would-block: counted drops).
    int receive_hwm = 100;
    size_t max_message_bytes = 16u << 20; // larger messages are dropped by ZeroMQ (ZMQ_MAXMSGSIZE)
  };
  // Binds `endpoint` (ipc://path, tcp://host:port, tcp://127.0.0.1:* for an OS-chosen port).
  // tcp://*:PORT binds loopback only; every interface must be named: tcp://0.0.0.0:PORT.
  // An error naming the endpoint when it cannot be bound.
  static Expected<std::unique_ptr<PullReceiver>> bind(const std::string& endpoint,
                                                      const Options& options);
  ~PullReceiver();

  // Binding an ipc:// path creates its directory (mode 0700) when missing and makes the socket
  // file 0600, so only the advisor's user can connect.

  // Waits up to `timeout` for one message (the first frame of a multi-part one). nullopt on
  // timeout or after close(). The owner thread's call. `source`, when given, gets the connection
  // the message came in on (its file descriptor: distinct among open connections, reused after
  // one closes; -1 when ZeroMQ cannot say), for fairness between senders.
  std::optional<std::vector<uint8_t>> receive(std::chrono::milliseconds timeout,
                                              int* source = nullptr);
  // The endpoint as bound, with an OS-chosen port resolved ("tcp://127.0.0.1:41234").
  std::string endpoint() const;
  // Unbinds and releases everything; a receive() in progress on another thread returns nullopt.
  // Safe from any thread, and more than once.
  void close();

private:
  struct Impl;
  explicit PullReceiver(std::unique_ptr<Impl>);
  static Expected<std::unique_ptr<PullReceiver>> bindImpl(const std::string&, const Options&);
  std::unique_ptr<Impl> impl_;
};

} // namespace gpuwise::transport
