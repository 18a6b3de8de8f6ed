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
// sessions could otherwise make the advisor allocate without bound. A message that fails to
// decode never opens a stream (garbage from invented sessions takes no slot). A batch of a session
// the router does not know opens one only while a slot is free; past the cap it is rejected as
// "too_many_streams". A Hello always gets a slot: with live limits set (setLiveLimits), a full
// router retires the stream quiet for longest (finished ones first) to make room.
//
// Retiring (live limits only): a stream whose final batch arrived and that has been quiet for a
// few seconds, one quiet for many minutes, or one retired to make room, is analysed one last time
// and only its aggregates are kept (StreamAnalysis): the report and /metrics still show it, in
// its place in the order of first contact, and its slot and records are freed. snapshot() and
// take() return live streams' records only; replay (no live limits) never retires.
//
// Memory budget (live limits only): the records every stream holds (pending window, window
// context, names) are aimed at half the budget, the rest being the headroom analysis, decoding
// and ZeroMQ's queues take. Each stream's window shrinks to its share of that half (half /
// streams, at 512 bytes an event, 1,024 events at the least), and while the records held are over
// it anyway, large batches (over 1,024 events), and any batch of a stream holding over 4 MiB, have
// their events dropped once decoded: counted per stream as dropped events and in shedByReason()
// ("events_over_memory_budget"). A well-behaved process sending small batches keeps every event
// through a flood; what it holds is bounded by its window.
//
// Not thread-safe: one owner thread (IngestServer's ingest thread, or the caller replaying a
// file). Never throws out of route(): an exception inside is counted as "internal_error".
#pragma once

#include "advisor/analysis/collection_analyzer.h"
#include "advisor/ingest/process_stream.h"
#include "advisor/ingest/rate_limited_log.h"
#include "profiler/model/trace.h"

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>

namespace gpuwise::advisor {

struct RouterProgress {
  uint64_t messages = 0; // every message offered to route()
  uint64_t hellos = 0;
  uint64_t batches = 0;
  uint64_t rejected = 0;    // routed nowhere or failed to decode
  uint64_t events = 0;      // events absorbed
  uint64_t windows = 0;     // windows analysed and dropped (all streams)
  size_t streams = 0;       // streams opened (live and retired)
  size_t final_streams = 0; // streams whose final batch arrived
  size_t live_streams = 0;  // streams holding a slot now
  size_t held_bytes = 0;    // records the live streams hold (StreamRouter's memory budget)
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

  // What a live advisor adds to routing: retiring streams (see above) and a memory budget for the
  // records streams hold (0: none).
  struct LiveLimits {
    size_t memory_budget_bytes = 0;
    std::chrono::seconds finished_quiet{5}; // a finished stream quiet this long is retired
    std::chrono::seconds idle_quiet{600};   // any stream quiet this long is retired
  };
  void setLiveLimits(const LiveLimits& limits) { live_limits_ = limits; }

  void route(std::span<const uint8_t> message,
             RateLimitedLog::Clock::time_point now = RateLimitedLog::Clock::now());

  // Counts `n` messages that never reached route() (the receiver had to drop them) as received
  // and rejected for `reason`.
  void countUnrouted(const std::string& reason, uint64_t n);

  const RouterProgress& progress() const { return progress_; }
  const std::map<std::string, uint64_t>& rejectedByReason() const { return rejected_; }
  // Detail the ingest let go of to stay within its bounds, by reason: "hello_fields_truncated",
  // "names_over_bound", "events_over_memory_budget", "windows_shrunk_for_memory_budget".
  std::map<std::string, uint64_t> shedByReason() const;

  // A pod as its processes name it (ProcessInfo: namespace, pod); empty strings outside Kubernetes.
  using PodKey = std::pair<std::string, std::string>;

  // The whole job so far, aggregated: every stream's analysed windows and open window, merged in
  // order of first contact, with the ingest's figures (messages, rejections, each stream's
  // health); wall_ns: the longest process's wall span. What live reports and /metrics read.
  JobAnalysis analysis() const { return analysis(std::nullopt); }
  // The same for the streams of one pod only (the ingest's figures, which are the advisor's, as
  // above): an advisor that several pods reach reports each pod apart.
  JobAnalysis analysis(const std::optional<PodKey>& pod) const;
  // The pods of the streams so far, in order of first contact (retired streams folded away
  // first).
  std::vector<PodKey> pods() const;

  // Each stream's aggregates (FrozenStream::aggregates()), in order of first contact, with the
  // ingest's figures in `health` (may be null; its streams aligned with the result). Analyses a
  // copy of each stream's open window (FrozenStream); retired streams as they were kept. What
  // /metrics reads.
  std::vector<StreamAnalysis> streamAnalyses(IngestHealth* health) const;
  // The same in parts, for a caller that must not hold the router still while streams are
  // analysed (IngestServer): the stream after `after` (a position of first contact; nullopt: the
  // first), as a copy of a live one or the kept aggregates of a retired one, with its health
  // appended to `health` (may be null); nullopt past the last. Positions never change, so a
  // caller walking them sees every stream once even while streams open and retire.
  // A live stream unchanged since keepAggregates() was given its aggregates comes as those
  // (`current`), not as a copy to analyse.
  struct StreamCopy {
    uint64_t position = 0;
    uint64_t version = 0; // of the live stream (ProcessStream::version())
    std::optional<FrozenStream> live;
    std::optional<StreamAnalysis> retired;
    std::shared_ptr<const StreamAnalysis> current;
    StreamAnalysis aggregates() &&;
  };
  std::optional<StreamCopy> copyStreamAfter(std::optional<uint64_t> after,
                                            IngestHealth* health) const;
  // Keeps `aggregates`, computed from the copy of the live stream at `position` taken at
  // `version`, for the next copyStreamAfter() while that stream receives nothing (a stream
  // retired or changed since ignores them).
  void keepAggregates(uint64_t position, uint64_t version,
                      std::shared_ptr<const StreamAnalysis> aggregates);
  void fillIngestHealth(IngestHealth* health) const;

  // A copy of every stream's records not yet folded into a window (all of them with
  // window_events == 0), in order of first contact, with the matching health.
  model::Trace snapshot(IngestHealth* health) const;
  // Moves the traces out and forgets every stream; the router starts empty again.
  model::Trace take(IngestHealth* health);

private:
  using Key = std::pair<int64_t, uint64_t>; // (pid, session id)
  using Clock = RateLimitedLog::Clock;
  struct LiveStream {
    std::unique_ptr<ProcessStream> stream;
    Key key;
    Clock::time_point last_message;
    size_t held_bytes = 0; // as of its last message
  };

  void reject(const std::string& reason, const std::string& detail, Clock::time_point now);
  // Finds or opens the stream for `route`; nullptr when the message was rejected (counted).
  LiveStream* streamFor(const transport::Route& route, Clock::time_point now);
  void retire(uint64_t position);
  // Retires the stream quiet for longest (finished first); false when there is none.
  bool retireQuietest();
  void retireQuiet(Clock::time_point now);
  // The most events a batch for a stream holding `stream_held` bytes may bring before they are
  // shed (SIZE_MAX: within the budget).
  size_t shedAbove(size_t stream_held) const;
  // The window each stream gets under the memory budget (window_events_ without one).
  size_t budgetedWindow() const;
  void account(LiveStream& s);
  std::optional<StreamHealth> healthOf(const StreamAnalysis& retired) const;

  transport::MessageOpener opener_;
  std::map<uint64_t, LiveStream> live_;        // by position of first contact
  std::map<uint64_t, StreamAnalysis> retired_; // by position of first contact
  std::map<Key, uint64_t> index_;              // live streams' positions
  uint64_t next_position_ = 0;
  // The stream of the previous message: a process sends many batches in a row.
  Key last_key_{};
  LiveStream* last_stream_ = nullptr;
  std::map<std::string, uint64_t> rejected_;
  std::map<std::string, uint64_t> shed_; // of streams retired or gone; live ones are added on read
  RouterProgress progress_;
  RateLimitedLog log_;
  size_t max_streams_;
  size_t window_events_;
  std::optional<LiveLimits> live_limits_;
  Clock::time_point last_sweep_{};
  // Retired streams past kMaxRetiredStreams, folded into one aggregate per pod for the report
  // (in order of the first fold; a sidecar serves one pod, so one entry).
  struct Folded {
    JobAnalysis analysis;
    std::vector<ProcessCollection> processes;
    std::optional<model::TimeNs> wall;
    bool simulated = false;
  };
  std::vector<std::pair<PodKey, Folded>> folded_;
};

// The key under which IngestHealth::rejected_by_reason counts a decode error ("malformed" ...).
std::string rejectReason(const transport::DecodeError& error);

} // namespace gpuwise::advisor
