// The messages received and not yet routed, bounded in bytes: the receiving thread hands each
// message here at once, so ZeroMQ's own queue never fills while the ingest thread analyses a
// window (a full PULL pipe stalls the connection's input, and a peer that disconnects then can
// abort libzmq 4.3's I/O thread: "Assertion failed: !_io_error"). Small messages (a well-behaved
// shim's batches) have a reserve of their own, so a flood of large ones does not crowd them out.
//
// Fair by connection: each message comes with its source (the connection it arrived on), every
// source has a queue of its own, and pop() takes from the sources in turn. When the queue is
// full, the message dropped (and counted) is the newest of the source holding the most bytes:
// a connection that floods the advisor loses its own messages, never those of a process that
// sends its batches at a normal pace (ZeroMQ's PULL socket is fair the same way, by pipe, but
// this queue drains it at once and would otherwise hand the flood every free byte).
//
// Threads: push() from the receiving thread, pop() from the ingest thread, close() and
// takeDropped() from any. Never throws except std::bad_alloc from push().
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
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

  // False when this message was dropped (the queue is full and its source holds the most, or
  // the queue is closed). Making room may drop older messages of a heavier source instead.
  bool push(std::vector<uint8_t>&& message, int source = -1) {
    {
      std::lock_guard lock(mutex_);
      if (closed_ || !makeRoom(message.size(), source)) {
        ++dropped_;
        return false;
      }
      Source& s = sources_[source];
      bytes_ += message.size();
      s.bytes += message.size();
      s.messages.push_back(std::move(message));
    }
    ready_.notify_one();
    return true;
  }

  // The oldest message of the next source in turn, or nullopt after `timeout` (or once closed
  // and empty).
  std::optional<std::vector<uint8_t>> pop(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    if (!ready_.wait_for(lock, timeout, [&] { return !sources_.empty() || closed_; }))
      return std::nullopt;
    if (sources_.empty()) return std::nullopt;
    auto it = sources_.upper_bound(last_source_);
    if (it == sources_.end()) it = sources_.begin();
    last_source_ = it->first;
    std::vector<uint8_t> m = std::move(it->second.messages.front());
    it->second.messages.pop_front();
    it->second.bytes -= m.size();
    bytes_ -= m.size();
    if (it->second.messages.empty()) sources_.erase(it);
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
  struct Source {
    std::deque<std::vector<uint8_t>> messages;
    size_t bytes = 0;
  };

  // Drops the newest messages of the heaviest other source until `size` bytes from `source` fit;
  // false when they cannot fit without taking from a source lighter than this one would be.
  // Linear in the sources (connections), and only when the queue is full.
  bool makeRoom(size_t size, int source) {
    const size_t limit = max_bytes_ + (size <= small_bytes_ ? small_reserve_bytes_ : 0);
    const auto own = sources_.find(source);
    const size_t own_bytes = (own == sources_.end() ? 0 : own->second.bytes) + size;
    while (bytes_ + size > limit) {
      auto heaviest = sources_.end();
      for (auto it = sources_.begin(); it != sources_.end(); ++it)
        if (it->first != source &&
            (heaviest == sources_.end() || it->second.bytes > heaviest->second.bytes))
          heaviest = it;
      if (heaviest == sources_.end() || heaviest->second.bytes <= own_bytes) return false;
      std::vector<uint8_t>& victim = heaviest->second.messages.back();
      heaviest->second.bytes -= victim.size();
      bytes_ -= victim.size();
      heaviest->second.messages.pop_back();
      ++dropped_;
      if (heaviest->second.messages.empty()) sources_.erase(heaviest);
    }
    return true;
  }

  const size_t max_bytes_, small_bytes_, small_reserve_bytes_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::map<int, Source> sources_; // only sources with messages queued
  int last_source_ = -1;          // pop()'s turn: the source it took from last
  size_t bytes_ = 0;
  uint64_t dropped_ = 0;
  bool closed_ = false;
};

} // namespace gpuwise::advisor
