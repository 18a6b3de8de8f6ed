// FakeBatchSink: a BatchSink for tests that keeps what the drain thread sends (with names resolved
// while the drain thread owns the table), and can be told to refuse sends, to stay unconnected, or
// to get stuck inside a send until released.
//
// Threads: the drain thread calls the BatchSink methods; tests read through the accessors. One
// mutex guards everything; waitFor() polls a condition with a deadline.
#pragma once

#include "interposer/batch_sink.h"

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace gpuwise::interposer::testing {

struct SentBatch {
  transport::Batch batch;
  std::vector<std::string> kernel_names; // parallel to batch.kernels
  std::vector<std::string> api_names;    // parallel to batch.api_calls
};

class FakeBatchSink final : public BatchSink {
public:
  struct State {
    bool connected = true;      // a peer is there: the first takeReconnected() says so
    int reconnects_pending = 0; // extra reconnections to report
    int refuse_next = 0;        // sends (batches) answered WouldBlock
    bool refuse_hello = false;
    bool stuck = false; // sendBatch blocks until released
    bool closed = false;
    int close_calls = 0;
    std::vector<transport::Hello> hellos;
    std::vector<SentBatch> batches;
    int refused = 0;
  };

  explicit FakeBatchSink(const model::NameTable* names = nullptr) : names_(names) {}
  void setNames(const model::NameTable* names) { names_ = names; }

  bool takeReconnected() override {
    std::lock_guard<std::mutex> l(m_);
    if (s_.connected && !reported_first_) {
      reported_first_ = true;
      return true;
    }
    if (s_.reconnects_pending > 0) {
      --s_.reconnects_pending;
      return true;
    }
    return false;
  }
  SendStatus sendHello(const transport::Hello& h) override {
    std::lock_guard<std::mutex> l(m_);
    if (s_.refuse_hello || !s_.connected) return SendStatus::WouldBlock;
    s_.hellos.push_back(h);
    cv_.notify_all();
    return SendStatus::Sent;
  }
  SendStatus sendBatch(const transport::Batch& b) override {
    std::unique_lock<std::mutex> l(m_);
    if (s_.stuck) {
      in_stuck_send_ = true;
      cv_.notify_all();
      cv_.wait(l, [&] { return !s_.stuck; });
      in_stuck_send_ = false;
    }
    if (s_.refuse_next > 0 || !s_.connected) {
      if (s_.refuse_next > 0) --s_.refuse_next;
      ++s_.refused;
      return SendStatus::WouldBlock;
    }
    SentBatch sent{b, {}, {}};
    if (names_) {
      for (const auto& k : b.kernels)
        sent.kernel_names.emplace_back(names_->get(k.name));
      for (const auto& a : b.api_calls)
        sent.api_names.emplace_back(names_->get(a.name));
    }
    s_.batches.push_back(std::move(sent));
    cv_.notify_all();
    return SendStatus::Sent;
  }
  void close(std::chrono::milliseconds) override {
    std::lock_guard<std::mutex> l(m_);
    s_.closed = true;
    ++s_.close_calls;
    cv_.notify_all();
  }

  // Runs fn(State&) under the lock (configure, or read a snapshot).
  template <class Fn> auto with(Fn&& fn) {
    std::lock_guard<std::mutex> l(m_);
    return fn(s_);
  }
  void release() {
    std::lock_guard<std::mutex> l(m_);
    s_.stuck = false;
    cv_.notify_all();
  }
  bool inStuckSend() {
    std::lock_guard<std::mutex> l(m_);
    return in_stuck_send_;
  }
  // Waits until pred(State&) holds or the deadline passes.
  bool waitFor(const std::function<bool(State&)>& pred,
               std::chrono::milliseconds deadline = std::chrono::seconds(10)) {
    std::unique_lock<std::mutex> l(m_);
    return cv_.wait_for(l, deadline, [&] { return pred(s_); });
  }

  // Totals over every batch received.
  template <class Fn> size_t count(Fn&& per_batch) {
    std::lock_guard<std::mutex> l(m_);
    size_t n = 0;
    for (const auto& b : s_.batches)
      n += per_batch(b);
    return n;
  }

private:
  std::mutex m_;
  std::condition_variable cv_;
  State s_;
  bool reported_first_ = false;
  bool in_stuck_send_ = false;
  const model::NameTable* names_;
};

} // namespace gpuwise::interposer::testing
