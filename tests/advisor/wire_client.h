// A small sender built from the transport API, playing the shim's part in the ingest and CLI
// tests: a PushSender, a BatchEncoder over its own NameTable, and helpers that wait (with a
// deadline, never a fixed sleep) for the connection and for each send to go through.
#pragma once

#include "transport/codec.h"
#include "transport/zmq/endpoints.h"

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

namespace gpuwise::advisor::test {

class WireClient {
public:
  WireClient(const std::string& endpoint, int64_t pid, uint64_t session_id)
      : pid_(pid), session_(session_id), encoder_(names_, session_id, pid) {
    transport::PushSender::Options o;
    o.linger_ms = 5000;
    auto sender = transport::PushSender::connect(endpoint, o);
    if (!sender) throw std::runtime_error("connect " + endpoint + ": " + sender.error().message);
    sender_ = std::move(*sender);
  }
  ~WireClient() { sender_->close(); }

  // Waits for the connection to the advisor (true) or the deadline (false).
  bool waitConnected(std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      if (sender_->takeReconnected()) return true;
      std::this_thread::yield();
    }
    return false;
  }

  // Sends raw bytes, retrying while the queue is full; true once sent.
  bool sendRaw(std::span<const uint8_t> message,
               std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      auto r = sender_->trySend(message);
      if (r == transport::SendResult::Sent) return true;
      if (r == transport::SendResult::Error) return false;
      std::this_thread::yield();
    }
    return false;
  }

  transport::Hello makeHello(const std::string& gpu = "NVIDIA H100 80GB HBM3",
                             bool simulated = false) const {
    transport::Hello h;
    h.session_id = session_;
    h.process.pid = pid_;
    h.process.host = "testhost";
    h.process.command = "fake_training --epochs 1";
    h.process.rank = 0;
    h.process.tier = model::CollectionTier::Cupti;
    h.simulated = simulated;
    h.start_time = 1'000'000'000;
    model::DeviceInfo d;
    d.index = 0;
    d.name = gpu;
    d.sm_count = 132;
    d.memory_total_bytes = 80ull << 30;
    d.compute_major = 9;
    d.simulated = simulated;
    h.devices.push_back(d);
    return h;
  }

  bool sendHello(const transport::Hello& h) {
    auto bytes = transport::encodeHello(h);
    return sendRaw(bytes);
  }

  model::NameTable& names() { return names_; }
  transport::BatchEncoder& encoder() { return encoder_; }

  // Encodes the pending events into the next batch (advancing the sequence) without sending it.
  std::vector<uint8_t> encodeBatch(uint64_t dropped = 0, bool final = false,
                                   model::TimeNs sent_time = 0) {
    auto bytes = encoder_.encode(dropped, final, sent_time);
    encoder_.confirm(true);
    return bytes;
  }
  bool sendBatch(uint64_t dropped = 0, bool final = false, model::TimeNs sent_time = 0) {
    auto bytes = encodeBatch(dropped, final, sent_time);
    return sendRaw(bytes);
  }

private:
  int64_t pid_;
  uint64_t session_;
  model::NameTable names_;
  transport::BatchEncoder encoder_;
  std::unique_ptr<transport::PushSender> sender_;
};

} // namespace gpuwise::advisor::test
