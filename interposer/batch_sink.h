// Where the drain thread's batches go. The real sink (transport_sink.cpp) encodes with the
// transport's BatchEncoder and sends with its PushSender; tests use a FakeBatchSink; "null:"
// endpoints (and builds without the transport) use NullSink. The drain thread depends only on this.
//
// Threads: the drain thread only. No method may block: a send that cannot go now says WouldBlock
// and the batch is gone (the caller counts its events as dropped). close() waits at most `linger`.
#pragma once

#include "profiler/model/expected.h"
#include "profiler/model/name_table.h"
#include "transport/codec.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

namespace gpuwise::interposer {

enum class SendStatus { Sent, WouldBlock, Error };

class BatchSink {
public:
  virtual ~BatchSink() = default;
  // True once for each (re)connection to a peer since the previous call: the caller sends a Hello.
  virtual bool takeReconnected() = 0;
  // Sends the Hello that opens a connection epoch; on Sent the names and kernel signatures are
  // sent again as they are next used (BatchEncoder::resetEpoch).
  virtual SendStatus sendHello(const transport::Hello& hello) = 0;
  // Encodes and sends one batch (names resolved in the table the sink was made with). Only the
  // event vectors, events_dropped, final and sent_time of `batch` are read.
  virtual SendStatus sendBatch(const transport::Batch& batch) = 0;
  virtual void close(std::chrono::milliseconds linger) = 0;
};

// The sink for an endpoint. "null:" gives a NullSink. `names` must outlive the sink. An error
// when the endpoint is malformed or no transport is built in.
Expected<std::unique_ptr<BatchSink>> makeSink(const std::string& endpoint,
                                              const model::NameTable& names, uint64_t session_id,
                                              int64_t pid, int linger_ms);

// Accepts everything and keeps nothing: "record, measure, discard" (overhead measurements).
class NullSink final : public BatchSink {
public:
  bool takeReconnected() override { return std::exchange(first_, false); }
  SendStatus sendHello(const transport::Hello&) override { return SendStatus::Sent; }
  SendStatus sendBatch(const transport::Batch&) override { return SendStatus::Sent; }
  void close(std::chrono::milliseconds) override {}

private:
  bool first_ = true;
};

} // namespace gpuwise::interposer
