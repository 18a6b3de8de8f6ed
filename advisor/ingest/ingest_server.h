// The live ingest: a PullReceiver bound to one endpoint, drained at once by a receiving thread into
// a ReceiveQueue (bounded in bytes and fair by connection: a full queue drops the flooding
// connection's newest messages and counts them, "receive_queue_full"), and one ingest thread that
// routes every queued message through a StreamRouter (optionally teeing it into a .gwt file first).
//
// Threads: start() spawns the receiving thread, which alone touches the receiver, and the ingest
// thread, which alone touches the router and the tee. Every public method may be called from any
// other thread; they take mutex_ briefly (the ingest thread holds it while it routes one message).
// waitFor() blocks the caller up to its deadline; nothing else blocks for long. stop() joins the
// ingest thread and is idempotent; the destructor calls it.
#pragma once

#include "advisor/analysis/collection_analyzer.h"
#include "advisor/ingest/rate_limited_log.h"
#include "advisor/ingest/receive_queue.h"
#include "advisor/ingest/stream_router.h"
#include "profiler/model/trace.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace gpuwise::transport {
class PullReceiver;
class GwtWriter;
} // namespace gpuwise::transport

namespace gpuwise::advisor {

struct IngestProgress : RouterProgress {
  // When the last message arrived; the server's start time before any.
  std::chrono::steady_clock::time_point last_message{};
  bool tee_failed = false; // the .gwt tee hit a write error and stopped recording
  uint64_t bytes = 0;      // bytes of the messages taken from the receive queue
};

class IngestServer {
public:
  struct Options {
    std::string endpoint;     // ipc://path, tcp://host:port, tcp://127.0.0.1:* ...
    std::string tee_path;     // record every message into this .gwt file; empty: no recording
    RateLimitedLog::Sink log; // problem lines; nullptr: stderr
    std::chrono::milliseconds poll{20}; // how often the ingest thread checks for stop()
    // Records per analysis window of each stream (window_aggregator.h); 0 keeps every record.
    size_t window_events = kDefaultWindowEvents;
    // What the streams' records may hold together (StreamRouter::LiveLimits); 0: no budget.
    // Finished and long-quiet streams are retired either way.
    size_t memory_budget_bytes = kDefaultMemoryBudgetBytes;
  };
  // The sidecar's container limit is 2 GiB (containers/); half of it for ingest state leaves the
  // rest to the analysis of windows, /metrics refreshes, the report and the allocator's slack.
  static constexpr size_t kDefaultMemoryBudgetBytes = size_t{1} << 30;

  // Binds and starts the ingest thread; nullptr with `error` set (one line) when the endpoint
  // cannot be bound or the tee file cannot be created.
  static std::unique_ptr<IngestServer> start(const Options& options, std::string* error);
  ~IngestServer();
  IngestServer(const IngestServer&) = delete;
  IngestServer& operator=(const IngestServer&) = delete;

  std::string endpoint() const; // as bound, OS-chosen port resolved
  IngestProgress progress() const;

  // Blocks until `condition(progress())` holds or `deadline` passes; returns whether it held.
  // Re-checks on every routed message and at least every 20 ms, so conditions on time ("quiet for
  // 300 ms") work too.
  bool waitFor(const std::function<bool(const IngestProgress&)>& condition,
               std::chrono::steady_clock::time_point deadline) const;

  // The job so far, aggregated (StreamRouter::analysis()); the server keeps running. Analyses
  // each stream's open window (at most a window of records) under the ingest lock; after stop(),
  // the final figures.
  JobAnalysis analysis() const;
  // The same for one pod's streams, and the pods seen (StreamRouter::analysis(pod), pods()).
  JobAnalysis analysis(const StreamRouter::PodKey& pod) const;
  std::vector<StreamRouter::PodKey> pods() const;
  // Each stream's aggregates (StreamRouter::streamAnalyses()): what /metrics is built from.
  // Takes the ingest lock once per stream, for as long as it takes to copy that stream's open
  // window (FrozenStream); the analysis of the copy runs after the lock is released. Streams are
  // copied one after another, so two streams' figures may be a few messages apart. A stream that
  // received nothing since the previous call is not copied nor analysed again: its aggregates
  // from then are kept (ProcessStream::keepAggregates) and returned.
  std::vector<StreamAnalysis> streamAnalyses(IngestHealth* health) const;
  // A copy of the records not yet folded into a window (all of them with window_events == 0).
  model::Trace snapshot(IngestHealth* health) const;
  // Stops the ingest thread, closes the receiver and finishes the tee file.
  void stop();
  // After stop(): moves the records not yet folded into a window out.
  model::Trace take(IngestHealth* health);

private:
  IngestServer() = default;
  void run();
  void receive();

  Options options_;
  std::unique_ptr<transport::PullReceiver> receiver_;
  std::unique_ptr<transport::GwtWriter> tee_;
  std::string endpoint_;

  mutable std::mutex mutex_;
  mutable std::condition_variable progressed_;
  std::unique_ptr<StreamRouter> router_; // guarded by mutex_
  IngestProgress progress_;              // guarded by mutex_

  // What the receiving thread has taken from ZeroMQ and the ingest thread not yet routed: 64 MiB of
  // messages on the wire (most are a few KiB: a shim's batch every 50 ms), 16 MiB more for
  // messages of at most 64 KiB.
  ReceiveQueue queue_{size_t{64} << 20, size_t{64} << 10, size_t{16} << 20};
  std::atomic<bool> stopping_{false};
  std::thread receive_thread_;
  std::thread thread_;
  std::once_flag stopped_;
};

} // namespace gpuwise::advisor
