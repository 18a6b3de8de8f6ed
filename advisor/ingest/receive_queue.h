// The messages received and not yet routed, bounded in bytes: the receiving thread hands each
// message here at once, so ZeroMQ's own queue never fills while the ingest thread analyses a
// window (a full PULL pipe stalls the connection's input, and a peer that disconnects then can
// abort libzmq 4.3's I/O thread: "Assertion failed: !_io_error"). When the queue is full, a new
// message is dropped and counted instead; small messages (a well-behaved shim's batches) have a
// reserve of their own, so a flood of large ones does not crowd them out.
//
// Threads: push() from the receiving thread, pop() from the ingest thread, close() and dropped()
// from any. Never throws except std::bad_alloc from push().
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <vector>

namespace gpuwise::advisor {

class ReceiveQueue {
public:
  // Messages up to `max_bytes` together; messages of at most `small_bytes` may use
  // `small_reserve_bytes` more.
  ReceiveQueue(size_t max_bytes, size_t small_bytes, size_t small_reserve_bytes)
      : max_bytes_(max_bytes), small_bytes_(small_bytes),
        small_reserve_bytes_(small_reserve_bytes) {}

  // False when the message was dropped (the queue is full, or closed).
  bool push(std::vector<uint8_t>&& message) {
    {
      std::lock_guard lock(mutex_);
      const size_t limit = max_bytes_ + (message.size() <= small_bytes_ ? small_reserve_bytes_ : 0);
      if (closed_ || bytes_ + message.size() > limit) {
        ++dropped_;
        return false;
      }
      bytes_ += message.size();
      messages_.push_back(std::move(message));
    }
    ready_.notify_one();
    return true;
  }

  // The oldest message, or nullopt after `timeout` (or once closed and empty).
  std::optional<std::vector<uint8_t>> pop(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    if (!ready_.wait_for(lock, timeout, [&] { return !messages_.empty() || closed_; }))
      return std::nullopt;
    if (messages_.empty()) return std::nullopt;
    std::vector<uint8_t> m = std::move(messages_.front());
    messages_.pop_front();
    bytes_ -= m.size();
    return m;
  }

  void close() {
    {
      std::lock_guard lock(mutex_);
      closed_ = true;
    }
    ready_.notify_all();
  }

  // Messages dropped since the previous call.
  uint64_t takeDropped() {
    std::lock_guard lock(mutex_);
    const uint64_t n = dropped_;
    dropped_ = 0;
    return n;
  }

private:
  const size_t max_bytes_, small_bytes_, small_reserve_bytes_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::vector<uint8_t>> messages_;
  size_t bytes_ = 0;
  uint64_t dropped_ = 0;
  bool closed_ = false;
};

} // namespace gpuwise::advisor
