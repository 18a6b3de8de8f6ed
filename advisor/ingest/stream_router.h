// Routes wire messages to per-process streams, keyed by (pid, session id), and turns them into a
// model::Trace. The core of ingest, shared by the live IngestServer and the replay of recorded
// .gwt files, so a recorded run yields the same report as the live one.
//
// Each message is opened once (MessageOpener: envelope, decompression, verifier); its route picks
// (or creates) the stream, whose own MessageDecoder decodes it into the stream's trace.
// A batch that arrives before its Hello (the advisor restarted mid-run) creates a stream of
// unknown identity rather than being lost. A message that fails to route or decode is dropped,
// counted by reason ("bad_envelope" for bytes that are not ours, "malformed" ...) and logged
// through a RateLimitedLog; every other stream carries on.
//
// Streams are capped (max_streams): every new (pid, session) costs memory, so a client inventing
// sessions could otherwise make the advisor allocate without bound. Messages for streams past the
// cap are rejected as "too_many_streams"; the streams already open carry on.
//
// Not thread-safe: one owner thread (IngestServer's ingest thread, or the caller replaying a
// file). Never throws out of route(): an exception inside is counted as "internal_error".
#pragma once

#include "advisor/analysis/collection_analyzer.h"
#include "advisor/ingest/process_stream.h"
#include "advisor/ingest/rate_limited_log.h"
#include "profiler/model/trace.h"

#include <map>
#include <memory>
#include <span>
#include <string>
#include <utility>

namespace gpuwise::advisor {

struct RouterProgress {
  uint64_t messages = 0; // every message offered to route()
  uint64_t hellos = 0;
  uint64_t batches = 0;
  uint64_t rejected = 0; // routed nowhere or failed to decode
  uint64_t events = 0;   // events absorbed
  uint64_t windows = 0;  // windows analysed and dropped (all streams)
  size_t streams = 0;
  size_t final_streams = 0; // streams whose final batch arrived
  bool allFinal() const { return streams > 0 && final_streams == streams; }
};

class StreamRouter {
public:
  // Far above a node's processes (a pod of 8 GPUs runs tens; a fork-heavy data loader hundreds).
  static constexpr size_t kMaxStreams = 4096;

  // window_events: each stream analyses and drops its records a window of this many events at a
  // time (window_aggregator.h), so memory stays bounded however long the run; 0 keeps every
  // record (snapshot()/take() then return whole traces: replay of a file, tests).
  explicit StreamRouter(RateLimitedLog::Sink log_sink = nullptr, size_t max_streams = kMaxStreams,
                        size_t window_events = kDefaultWindowEvents);

  void route(std::span<const uint8_t> message,
             RateLimitedLog::Clock::time_point now = RateLimitedLog::Clock::now());

  const RouterProgress& progress() const { return progress_; }
  const std::map<std::string, uint64_t>& rejectedByReason() const { return rejected_; }

  // The whole job so far, aggregated: every stream's analysed windows and open window, merged in
  // order of first contact, with the ingest's figures (messages, rejections, each stream's
  // health); wall_ns: the longest process's wall span. What live reports and /metrics read.
  JobAnalysis analysis() const;

  // Each stream's aggregates (FrozenStream::aggregates()), in order of first contact, with the
  // ingest's figures in `health` (may be null; its streams aligned with the result). Analyses a
  // copy of each stream's open window (FrozenStream). What /metrics reads.
  std::vector<StreamAnalysis> streamAnalyses(IngestHealth* health) const;
  // The same in parts, for a caller that must not hold the router still while streams are
  // analysed (IngestServer): the streams so far, stream i's copy with its health appended to
  // `health` (may be null), and the ingest's own figures. Streams are only ever added (until
  // take()), so index i names the same stream between calls.
  size_t streamCount() const { return streams_.size(); }
  FrozenStream freezeStream(size_t i, IngestHealth* health) const;
  void fillIngestHealth(IngestHealth* health) const;

  // A copy of every stream's records not yet folded into a window (all of them with
  // window_events == 0), in order of first contact, with the matching health.
  model::Trace snapshot(IngestHealth* health) const;
  // Moves the traces out and forgets every stream; the router starts empty again.
  model::Trace take(IngestHealth* health);

private:
  void reject(const std::string& reason, const std::string& detail,
              RateLimitedLog::Clock::time_point now);

  using Key = std::pair<int64_t, uint64_t>; // (pid, session id)
  transport::MessageOpener opener_;
  std::map<Key, size_t> index_;
  // The stream of the previous message: a process sends many batches in a row.
  Key last_key_{};
  ProcessStream* last_stream_ = nullptr;
  std::vector<std::unique_ptr<ProcessStream>> streams_; // order of first contact
  std::map<std::string, uint64_t> rejected_;
  RouterProgress progress_;
  RateLimitedLog log_;
  size_t max_streams_;
  size_t window_events_;
};

// The key under which IngestHealth::rejected_by_reason counts a decode error ("malformed" ...).
std::string rejectReason(const transport::DecodeError& error);

} // namespace gpuwise::advisor
