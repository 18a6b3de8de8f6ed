// ZeroMQ endpoints. Only this folder includes ZeroMQ headers.
//
// PushSender lives on the shim's drain thread and never blocks: sends use ZMQ_DONTWAIT,
// ZMQ_IMMEDIATE (nothing is queued for a peer that is not connected) and a bounded high-water
// mark, so an absent, dead or stalled advisor turns into a counted drop, never a stalled training
// job. PullReceiver lives on the advisor's ingest thread.
#pragma once

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
    int send_hwm = 64;      // messages queued before sends would block (then dropped)
    int linger_ms = 200;    // how long close() may wait to flush queued messages at exit
  };
  // Connects (asynchronously) to `endpoint`; returns nullptr with `error` set when the endpoint is
  // malformed. An advisor that is not there yet is not an error.
  static std::unique_ptr<PushSender> connect(const std::string& endpoint, const Options& options,
                                             std::string* error);
  ~PushSender();

  SendResult trySend(std::span<const uint8_t> message);
  // True once for each (re)connection to a peer since the previous call: the caller then starts a
  // new connection epoch (Hello again, names and signatures again).
  bool takeReconnected();
  // Closes the socket and the context, waiting at most linger_ms for queued messages.
  void close();

private:
  struct Impl;
  explicit PushSender(std::unique_ptr<Impl>);
  std::unique_ptr<Impl> impl_;
};

class PullReceiver {
public:
  struct Options {
    int receive_hwm = 10000;
    size_t max_message_bytes = 16u << 20; // larger messages are dropped by ZeroMQ (ZMQ_MAXMSGSIZE)
  };
  // Binds `endpoint` (ipc://path, tcp://host:port, tcp://127.0.0.1:* for an OS-chosen port).
  static std::unique_ptr<PullReceiver> bind(const std::string& endpoint, const Options& options,
                                            std::string* error);
  ~PullReceiver();

  // Waits up to `timeout` for one message. nullopt on timeout or after close().
  std::optional<std::vector<uint8_t>> receive(std::chrono::milliseconds timeout);
  // The endpoint as bound, with an OS-chosen port resolved.
  std::string endpoint() const;
  void close();

private:
  struct Impl;
  explicit PullReceiver(std::unique_ptr<Impl>);
  std::unique_ptr<Impl> impl_;
};

} // namespace gpuwise::transport
