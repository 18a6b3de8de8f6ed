#include "advisor/ingest/stream_router.h"

#include <exception>

namespace gpuwise::advisor {

std::string rejectReason(const transport::DecodeError& e) {
  using K = transport::DecodeError::Kind;
  switch (e.kind) {
  case K::TooLarge: return "too_large";
  case K::BadEnvelope: return "bad_envelope";
  case K::UnsupportedVersion: return "unsupported_version";
  case K::BadCompression: return "bad_compression";
  case K::Malformed: return "malformed";
  case K::UnknownSession: return "unknown_session";
  }
  return "unknown";
}

StreamRouter::StreamRouter(RateLimitedLog::Sink log_sink, size_t max_streams,
                           size_t window_events)
    : log_(std::move(log_sink)), max_streams_(max_streams), window_events_(window_events) {}

void StreamRouter::reject(const std::string& reason, const std::string& detail,
                          RateLimitedLog::Clock::time_point now) {
  ++progress_.rejected;
  ++rejected_[reason];
  log_.log(reason, "gpuwise advisor: dropped a message (" + reason + "): " + detail, now);
}

void StreamRouter::route(std::span<const uint8_t> message, RateLimitedLog::Clock::time_point now) {
  ++progress_.messages;
  try {
    auto routed = opener_.open(message);
    if (auto* error = std::get_if<transport::DecodeError>(&routed)) {
      reject(rejectReason(*error), error->detail, now);
      return;
    }
    const auto& route = std::get<transport::Route>(routed);
    Key key{route.pid, route.session_id};
    if (!last_stream_ || key != last_key_) {
      auto it = index_.find(key);
      if (it == index_.end()) {
        if (streams_.size() >= max_streams_) {
          reject("too_many_streams",
                 "pid " + std::to_string(route.pid) + ": already serving " +
                     std::to_string(max_streams_) + " process streams",
                 now);
          return;
        }
        it = index_.emplace(key, streams_.size()).first;
        streams_.push_back(
            std::make_unique<ProcessStream>(route.pid, route.session_id, window_events_));
        ++progress_.streams;
      }
      last_key_ = key;
      last_stream_ = streams_[it->second].get();
    }
    auto& stream = *last_stream_;
    bool was_final = stream.finalReceived();
    uint64_t events_before = stream.events();
    uint64_t windows_before = stream.windows();
    if (auto error = stream.accept(opener_)) {
      reject(rejectReason(*error), "pid " + std::to_string(route.pid) + ": " + error->detail, now);
      return;
    }
    if (route.is_hello) {
      ++progress_.hellos;
    } else {
      ++progress_.batches;
    }
    progress_.events += stream.events() - events_before;
    progress_.windows += stream.windows() - windows_before;
    if (!was_final && stream.finalReceived()) ++progress_.final_streams;
  } catch (const std::exception& e) {
    // Out of memory while growing a trace, most likely: drop this message, keep serving.
    reject("internal_error", e.what(), now);
  }
}

JobAnalysis StreamRouter::analysis() const {
  JobAnalysis job;
  job.source.kind = model::SourceKind::Live;
  std::optional<model::TimeNs> wall;
  // One entry per stream, as a whole-trace analysis lists them: two sessions of one pid (an exec)
  // are two processes, which CollectionResult::merge (by pid) would fold into one.
  std::vector<ProcessCollection> processes;
  for (const auto& s : streams_) {
    auto a = s->analysis();
    processes.insert(processes.end(), a.collection.processes.begin(), a.collection.processes.end());
    job.merge(a);
    job.source.simulated = job.source.simulated || s->simulated();
    if (auto w = s->wallNs(); w && (!wall || *w > *wall)) wall = w;
  }
  job.wall_ns = wall; // merge() adds the windows' walls; the job's is its longest process's
  job.collection.processes = std::move(processes);
  job.collection.messages = progress_.messages;
  job.collection.rejected_by_reason = rejected_;
  return job;
}

std::vector<StreamAnalysis> StreamRouter::streamAnalyses(IngestHealth* health) const {
  std::vector<StreamAnalysis> out;
  out.reserve(streams_.size());
  for (size_t i = 0; i < streams_.size(); ++i)
    out.push_back(freezeStream(i, health).aggregates());
  fillIngestHealth(health);
  return out;
}

FrozenStream StreamRouter::freezeStream(size_t i, IngestHealth* health) const {
  FrozenStream f = streams_.at(i)->freeze();
  if (health) health->streams.push_back(f.health);
  return f;
}

void StreamRouter::fillIngestHealth(IngestHealth* health) const {
  if (!health) return;
  health->messages = progress_.messages;
  health->rejected_by_reason = rejected_;
}

model::Trace StreamRouter::snapshot(IngestHealth* health) const {
  model::Trace t;
  t.source.kind = model::SourceKind::Live;
  for (const auto& s : streams_) {
    t.processes.push_back(s->trace());
    t.source.simulated = t.source.simulated || s->simulated();
    if (health) health->streams.push_back(s->health());
  }
  fillIngestHealth(health);
  return t;
}

model::Trace StreamRouter::take(IngestHealth* health) {
  model::Trace t;
  t.source.kind = model::SourceKind::Live;
  for (auto& s : streams_) {
    if (health) health->streams.push_back(s->health());
    t.source.simulated = t.source.simulated || s->simulated();
    t.processes.push_back(s->takeTrace());
  }
  if (health) {
    health->messages = progress_.messages;
    health->rejected_by_reason = rejected_;
  }
  streams_.clear();
  index_.clear();
  last_stream_ = nullptr;
  rejected_.clear();
  progress_ = {};
  return t;
}

} // namespace gpuwise::advisor
