#include "advisor/ingest/stream_router.h"

#include <algorithm>
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

namespace {

// The memory budget in numbers (stream_router.h): records held are kept under half the budget;
// a window is given 512 bytes an event (a record is 40-130 bytes; the vectors' slack and the
// copies a window's analysis makes take the rest), and never fewer than 1,024 events, below which
// the analysis of a window costs more than the records it frees.
constexpr size_t kBudgetBytesPerEvent = 512;
constexpr size_t kMinBudgetedWindow = 1024;
// Over the budget, batches of more events than this are shed, and every batch of a stream that
// holds more than kSmallStreamBytes. A shim sends a batch every 50 ms: 1,024 events is 20,000
// events a second, a busy training loop's launches and copies.
constexpr size_t kMaxUnshedBatchEvents = 1024;
constexpr size_t kSmallStreamBytes = size_t{4} << 20;
// Retired streams whose aggregates /metrics and the report keep; past it the oldest are dropped
// from /metrics and folded into the report's one aggregate of earlier streams.
constexpr size_t kMaxRetiredStreams = 4 * StreamRouter::kMaxStreams;
// How often quiet streams are looked for.
constexpr std::chrono::seconds kSweepEvery{1};

} // namespace

StreamRouter::StreamRouter(RateLimitedLog::Sink log_sink, size_t max_streams, size_t window_events)
    : log_(std::move(log_sink)), max_streams_(max_streams), window_events_(window_events) {}

void StreamRouter::reject(const std::string& reason, const std::string& detail,
                          Clock::time_point now) {
  ++progress_.rejected;
  ++rejected_[reason];
  log_.log(reason, "gpuwise advisor: dropped a message (" + reason + "): " + detail, now);
}

void StreamRouter::countUnrouted(const std::string& reason, uint64_t n) {
  progress_.messages += n;
  progress_.rejected += n;
  rejected_[reason] += n;
}

StreamRouter::LiveStream* StreamRouter::streamFor(const transport::Route& route,
                                                  Clock::time_point now) {
  Key key{route.pid, route.session_id};
  if (last_stream_ && key == last_key_) return last_stream_;
  if (auto it = index_.find(key); it != index_.end()) {
    last_key_ = key;
    last_stream_ = &live_.at(it->second);
    return last_stream_;
  }
  // A new session: the message must decode before the stream takes a slot, so decode it into a
  // stream of its own first.
  if (live_.size() >= max_streams_ && !(route.is_hello && live_limits_)) {
    reject("too_many_streams",
           "pid " + std::to_string(route.pid) + ": already serving " +
               std::to_string(max_streams_) + " process streams",
           now);
    return nullptr;
  }
  auto stream = std::make_unique<ProcessStream>(route.pid, route.session_id, window_events_);
  if (window_events_ > 0 && live_limits_) stream->limitWindow(budgetedWindow());
  if (auto error = stream->accept(opener_, shedAbove(0))) {
    reject(rejectReason(*error), "pid " + std::to_string(route.pid) + ": " + error->detail, now);
    return nullptr;
  }
  // A Hello that decoded: a full router makes room (stream_router.h).
  if (live_.size() >= max_streams_ && !retireQuietest()) {
    reject("too_many_streams", "pid " + std::to_string(route.pid) + ": no stream to retire", now);
    return nullptr;
  }
  const uint64_t position = next_position_++;
  auto& s = live_.emplace(position, LiveStream{std::move(stream), key, now, 0}).first->second;
  index_.emplace(key, position);
  ++progress_.streams;
  progress_.live_streams = live_.size();
  last_key_ = key;
  last_stream_ = &s;
  return &s;
}

void StreamRouter::route(std::span<const uint8_t> message, Clock::time_point now) {
  ++progress_.messages;
  try {
    if (live_limits_ && now - last_sweep_ >= kSweepEvery) {
      last_sweep_ = now;
      retireQuiet(now);
    }
    const auto routed = opener_.open(message);
    if (!routed) {
      reject(rejectReason(routed.error()), routed.error().detail, now);
      return;
    }
    const transport::Route& route = *routed;
    const bool known = index_.count({route.pid, route.session_id}) > 0;
    LiveStream* live = streamFor(route, now);
    if (!live) return;
    auto& stream = *live->stream;
    bool was_final = stream.finalReceived();
    uint64_t events_before = known ? stream.events() : 0;
    uint64_t windows_before = known ? stream.windows() : 0;
    if (known) {
      if (auto error = stream.accept(opener_, shedAbove(live->held_bytes))) {
        reject(rejectReason(*error), "pid " + std::to_string(route.pid) + ": " + error->detail,
               now);
        return;
      }
    } else {
      was_final = false;
    }
    live->last_message = now;
    if (route.is_hello) {
      ++progress_.hellos;
    } else {
      ++progress_.batches;
    }
    progress_.events += stream.events() - events_before;
    progress_.windows += stream.windows() - windows_before;
    if (!was_final && stream.finalReceived()) ++progress_.final_streams;
    if (window_events_ > 0 && live_limits_ && live_limits_->memory_budget_bytes > 0) {
      const size_t window = budgetedWindow();
      if (window != stream.windowEvents()) {
        if (window < stream.windowEvents()) ++shed_["windows_shrunk_for_memory_budget"];
        stream.limitWindow(window);
      }
    }
    account(*live);
  } catch (const std::exception& e) {
    // Out of memory while growing a trace, most likely: drop this message, keep serving.
    reject("internal_error", e.what(), now);
  }
}

void StreamRouter::account(LiveStream& s) {
  const size_t held = s.stream->heldBytes();
  progress_.held_bytes = progress_.held_bytes - s.held_bytes + held;
  s.held_bytes = held;
}

size_t StreamRouter::shedAbove(size_t stream_held) const {
  if (!live_limits_ || live_limits_->memory_budget_bytes == 0 ||
      progress_.held_bytes <= live_limits_->memory_budget_bytes / 2)
    return SIZE_MAX;
  // Over the budget: large batches lose their events; small ones too from a stream that holds
  // much. A well-behaved process (a batch of a few hundred events every 50 ms, its records cut
  // into windows) keeps every event while a flood goes on; what it adds is bounded by its window.
  return stream_held > kSmallStreamBytes ? 0 : kMaxUnshedBatchEvents;
}

size_t StreamRouter::budgetedWindow() const {
  if (!live_limits_ || live_limits_->memory_budget_bytes == 0) return window_events_;
  const size_t share = live_limits_->memory_budget_bytes / 2 / std::max<size_t>(live_.size(), 1);
  return std::clamp(share / kBudgetBytesPerEvent, std::min(kMinBudgetedWindow, window_events_),
                    window_events_);
}

std::optional<StreamHealth> StreamRouter::healthOf(const StreamAnalysis& retired) const {
  const auto& processes = retired.analysis.collection.processes;
  if (processes.empty()) return std::nullopt;
  return processes.front().stream;
}

void StreamRouter::retire(uint64_t position) {
  auto it = live_.find(position);
  if (it == live_.end()) return;
  auto& stream = *it->second.stream;
  shed_["events_over_memory_budget"] += stream.eventsShed();
  shed_["hello_fields_truncated"] += stream.helloFieldsTruncated();
  shed_["names_over_bound"] += stream.namesDropped();
  retired_.emplace(position, stream.freeze().aggregates());
  progress_.held_bytes -= it->second.held_bytes;
  index_.erase(it->second.key);
  if (last_stream_ == &it->second) last_stream_ = nullptr;
  live_.erase(it);
  progress_.live_streams = live_.size();
  while (retired_.size() > kMaxRetiredStreams) {
    // The oldest leave /metrics; the report keeps their figures in folded_, by pod.
    auto oldest = retired_.begin();
    PodKey pod{oldest->second.info.ns, oldest->second.info.pod};
    auto f = std::find_if(folded_.begin(), folded_.end(),
                          [&](const auto& entry) { return entry.first == pod; });
    if (f == folded_.end()) f = folded_.insert(folded_.end(), {pod, Folded{}});
    Folded& into = f->second;
    JobAnalysis a = std::move(oldest->second.analysis);
    into.processes.insert(into.processes.end(), a.collection.processes.begin(),
                          a.collection.processes.end());
    if (a.wall_ns && (!into.wall || *a.wall_ns > *into.wall)) into.wall = a.wall_ns;
    into.simulated = into.simulated || oldest->second.simulated;
    into.analysis.fold(a); // finished when read: analysis()
    retired_.erase(oldest);
  }
}

bool StreamRouter::retireQuietest() {
  const LiveStream* best = nullptr;
  uint64_t best_position = 0;
  for (const auto& [position, s] : live_) {
    const bool finished = s.stream->finalReceived();
    if (!best || (finished && !best->stream->finalReceived()) ||
        (finished == best->stream->finalReceived() && s.last_message < best->last_message)) {
      best = &s;
      best_position = position;
    }
  }
  if (!best) return false;
  retire(best_position);
  return true;
}

void StreamRouter::retireQuiet(Clock::time_point now) {
  std::vector<uint64_t> quiet;
  for (const auto& [position, s] : live_) {
    const auto silent = now - s.last_message;
    if ((s.stream->finalReceived() && silent >= live_limits_->finished_quiet) ||
        silent >= live_limits_->idle_quiet)
      quiet.push_back(position);
  }
  for (uint64_t position : quiet)
    retire(position);
  // Streams that sent nothing since the budget's share shrank get their smaller window now.
  if (window_events_ > 0 && live_limits_->memory_budget_bytes > 0) {
    const size_t window = budgetedWindow();
    for (auto& [position, s] : live_) {
      if (s.stream->windowEvents() <= window) continue;
      s.stream->limitWindow(window);
      account(s);
    }
  }
}

std::map<std::string, uint64_t> StreamRouter::shedByReason() const {
  auto out = shed_;
  for (const auto& [position, s] : live_) {
    out["events_over_memory_budget"] += s.stream->eventsShed();
    out["hello_fields_truncated"] += s.stream->helloFieldsTruncated();
    out["names_over_bound"] += s.stream->namesDropped();
  }
  std::erase_if(out, [](const auto& kv) { return kv.second == 0; });
  return out;
}

std::vector<StreamRouter::PodKey> StreamRouter::pods() const {
  std::vector<PodKey> out;
  auto add = [&](PodKey key) {
    if (std::find(out.begin(), out.end(), key) == out.end()) out.push_back(std::move(key));
  };
  for (const auto& entry : folded_)
    add(entry.first);
  auto live = live_.begin();
  auto retired = retired_.begin();
  while (live != live_.end() || retired != retired_.end()) {
    const bool from_live =
        retired == retired_.end() || (live != live_.end() && live->first < retired->first);
    const model::ProcessInfo& info =
        from_live ? (live++)->second.stream->trace().info : (retired++)->second.info;
    add({info.ns, info.pod});
  }
  return out;
}

JobAnalysis StreamRouter::analysis(const std::optional<PodKey>& pod) const {
  auto of = [&](const model::ProcessInfo& info) {
    return !pod || (info.ns == pod->first && info.pod == pod->second);
  };
  JobAnalysis job;
  job.source.kind = model::SourceKind::Live;
  std::optional<model::TimeNs> wall;
  // One entry per stream, as a whole-trace analysis lists them: two sessions of one pid (an exec)
  // are two processes, which CollectionResult::merge (by pid) would fold into one.
  std::vector<ProcessCollection> processes;
  bool folded = false;
  auto add = [&](const JobAnalysis& a, bool simulated, std::optional<model::TimeNs> w) {
    processes.insert(processes.end(), a.collection.processes.begin(), a.collection.processes.end());
    job.fold(a); // finished once, below: per process, the ranks were summarised P times
    folded = true;
    job.source.simulated = job.source.simulated || simulated;
    if (w && (!wall || *w > *wall)) wall = w;
  };
  for (const auto& [key, f] : folded_) {
    if (pod && key != *pod) continue;
    JobAnalysis a = f.analysis;
    a.collection.processes = f.processes;
    add(a, f.simulated, f.wall);
  }
  auto live = live_.begin();
  auto retired = retired_.begin();
  while (live != live_.end() || retired != retired_.end()) {
    if (retired == retired_.end() || (live != live_.end() && live->first < retired->first)) {
      const auto& s = *live->second.stream;
      if (of(s.trace().info)) add(s.analysis(), s.simulated(), s.wallNs());
      ++live;
    } else {
      const auto& r = retired->second;
      if (of(r.info)) add(r.analysis, r.simulated, r.analysis.wall_ns);
      ++retired;
    }
  }
  if (folded) job.finish();
  job.wall_ns = wall; // merge() adds the windows' walls; the job's is its longest process's
  job.collection.processes = std::move(processes);
  job.collection.messages = progress_.messages;
  job.collection.rejected_by_reason = rejected_;
  job.collection.shed_by_reason = shedByReason();
  return job;
}

StreamAnalysis StreamRouter::StreamCopy::aggregates() && {
  if (live) return std::move(*live).aggregates();
  if (current) return *current;
  return std::move(*retired);
}

void StreamRouter::keepAggregates(uint64_t position, uint64_t version,
                                  std::shared_ptr<const StreamAnalysis> aggregates) {
  if (auto it = live_.find(position); it != live_.end())
    it->second.stream->keepAggregates(version, std::move(aggregates));
}

std::vector<StreamAnalysis> StreamRouter::streamAnalyses(IngestHealth* health) const {
  std::vector<StreamAnalysis> out;
  out.reserve(live_.size() + retired_.size());
  std::optional<uint64_t> at;
  while (auto copy = copyStreamAfter(at, health)) {
    at = copy->position;
    out.push_back(std::move(*copy).aggregates());
  }
  fillIngestHealth(health);
  return out;
}

std::optional<StreamRouter::StreamCopy> StreamRouter::copyStreamAfter(std::optional<uint64_t> after,
                                                                      IngestHealth* health) const {
  auto live = after ? live_.upper_bound(*after) : live_.begin();
  auto retired = after ? retired_.upper_bound(*after) : retired_.begin();
  StreamCopy copy;
  if (live != live_.end() && (retired == retired_.end() || live->first < retired->first)) {
    const ProcessStream& stream = *live->second.stream;
    copy.position = live->first;
    copy.version = stream.version();
    if (health) health->streams.push_back(stream.health());
    copy.current = stream.currentAggregates();
    if (!copy.current) copy.live = stream.freeze();
    return copy;
  }
  if (retired == retired_.end()) return std::nullopt;
  copy.position = retired->first;
  copy.retired = retired->second;
  if (health) health->streams.push_back(healthOf(retired->second));
  return copy;
}

void StreamRouter::fillIngestHealth(IngestHealth* health) const {
  if (!health) return;
  health->messages = progress_.messages;
  health->rejected_by_reason = rejected_;
  health->shed_by_reason = shedByReason();
}

model::Trace StreamRouter::snapshot(IngestHealth* health) const {
  model::Trace t;
  t.source.kind = model::SourceKind::Live;
  for (const auto& [position, live] : live_) {
    const auto& s = *live.stream;
    t.processes.push_back(s.trace());
    t.source.simulated = t.source.simulated || s.simulated();
    if (health) health->streams.push_back(s.health());
  }
  fillIngestHealth(health);
  return t;
}

model::Trace StreamRouter::take(IngestHealth* health) {
  model::Trace t;
  t.source.kind = model::SourceKind::Live;
  for (auto& [position, live] : live_) {
    auto& s = *live.stream;
    if (health) health->streams.push_back(s.health());
    t.source.simulated = t.source.simulated || s.simulated();
    t.processes.push_back(s.takeTrace());
  }
  fillIngestHealth(health);
  live_.clear();
  retired_.clear();
  index_.clear();
  last_stream_ = nullptr;
  rejected_.clear();
  shed_.clear();
  folded_.clear();
  progress_ = {};
  return t;
}

} // namespace gpuwise::advisor
