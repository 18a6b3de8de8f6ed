#include "advisor/ingest/ingest_server.h"

#include "advisor/import/heap_tuning.h"

#include "transport/gwt_file.h"
#include "transport/zmq/endpoints.h"

#include <memory>
#include <optional>

#include <malloc.h>

#include <pthread.h>

namespace gpuwise::advisor {

std::unique_ptr<IngestServer> IngestServer::start(const Options& options, std::string* error) {
  // Before any of the server's threads (ZeroMQ's, receive, ingest) exists: each then allocates
  // from the main heap, whose freed pages are kept from one window to the next.
  tuneLiveAdvisorHeap();
  std::unique_ptr<IngestServer> s(new IngestServer());
  s->options_ = options;
  auto bound = transport::PullReceiver::bind(options.endpoint, {});
  if (!bound) {
    *error = "cannot listen on " + options.endpoint + ": " + bound.error().message;
    return nullptr;
  }
  s->receiver_ = std::move(*bound);
  if (!options.tee_path.empty()) {
    auto tee = transport::GwtWriter::create(options.tee_path);
    if (!tee) {
      *error = options.tee_path + ": " + tee.error().message;
      s->receiver_->close();
      return nullptr;
    }
    s->tee_ = std::move(*tee);
  }
  s->endpoint_ = s->receiver_->endpoint();
  s->router_ =
      std::make_unique<StreamRouter>(options.log, StreamRouter::kMaxStreams, options.window_events);
  StreamRouter::LiveLimits limits;
  limits.memory_budget_bytes = options.memory_budget_bytes;
  s->router_->setLiveLimits(limits);
  s->progress_.last_message = std::chrono::steady_clock::now();
  s->receive_thread_ = std::thread([raw = s.get()] { raw->receive(); });
  s->thread_ = std::thread([raw = s.get()] { raw->run(); });
  return s;
}

IngestServer::~IngestServer() {
  stop();
}

std::string IngestServer::endpoint() const {
  return endpoint_;
}

void IngestServer::receive() {
  pthread_setname_np(pthread_self(), "gpuwise-receive");
  while (!stopping_.load(std::memory_order_relaxed)) {
    try {
      int source = -1;
      if (auto message = receiver_->receive(options_.poll, &source))
        queue_.push(std::move(*message), source);
    } catch (const std::bad_alloc&) {
      // The message is lost; the queue counts nothing it never saw, the sender's sequence does.
    }
  }
}

void IngestServer::run() {
  pthread_setname_np(pthread_self(), "gpuwise-ingest");
  // Bytes of messages since the allocator last gave memory back: after a burst (a backlog of large
  // messages, a flood of streams retired), freed memory stays in the heap until trimmed.
  size_t since_trim = 0;
  constexpr size_t kTrimAfterBytes = size_t{64} << 20;
  while (!stopping_.load(std::memory_order_relaxed)) {
    if (const uint64_t dropped = queue_.takeDropped()) {
      std::lock_guard lock(mutex_);
      router_->countUnrouted("receive_queue_full", dropped);
      static_cast<RouterProgress&>(progress_) = router_->progress();
    }
    auto message = queue_.pop(options_.poll);
    if (!message) {
      if (since_trim >= kTrimAfterBytes) { // quiet now: a good moment
        ::malloc_trim(0);
        since_trim = 0;
      }
      continue;
    }
    since_trim += message->size();
    bool tee_failed = false;
    if (tee_ && !tee_->append(*message)) {
      // Keep serving: the report matters more than the recording. Say so once.
      tee_failed = true;
      tee_.reset();
    }
    auto now = std::chrono::steady_clock::now();
    {
      std::lock_guard lock(mutex_);
      router_->route(*message, now);
      static_cast<RouterProgress&>(progress_) = router_->progress();
      progress_.last_message = now;
      progress_.bytes += message->size();
      progress_.tee_failed = progress_.tee_failed || tee_failed;
    }
    progressed_.notify_all();
  }
}

IngestProgress IngestServer::progress() const {
  std::lock_guard lock(mutex_);
  return progress_;
}

bool IngestServer::waitFor(const std::function<bool(const IngestProgress&)>& condition,
                           std::chrono::steady_clock::time_point deadline) const {
  std::unique_lock lock(mutex_);
  for (;;) {
    if (condition(progress_)) return true;
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return false;
    progressed_.wait_until(lock, std::min(deadline, now + std::chrono::milliseconds(20)));
  }
}

JobAnalysis IngestServer::analysis() const {
  std::lock_guard lock(mutex_);
  return router_->analysis();
}

JobAnalysis IngestServer::analysis(const StreamRouter::PodKey& pod) const {
  std::lock_guard lock(mutex_);
  return router_->analysis(pod);
}

std::vector<StreamRouter::PodKey> IngestServer::pods() const {
  std::lock_guard lock(mutex_);
  return router_->pods();
}

std::vector<StreamAnalysis> IngestServer::streamAnalyses(IngestHealth* health) const {
  // One stream at a time: the lock is held while the stream is copied, and released while the
  // copy is analysed (30x longer: a refresh of 64 busy streams held ingest still for seconds).
  std::vector<StreamAnalysis> out;
  std::optional<uint64_t> at;
  for (;;) {
    std::optional<StreamRouter::StreamCopy> copy;
    {
      std::lock_guard lock(mutex_);
      copy = router_->copyStreamAfter(at, health);
      if (!copy) {
        router_->fillIngestHealth(health);
        return out;
      }
    }
    at = copy->position;
    if (!copy->live) {
      out.push_back(std::move(*copy).aggregates());
      continue;
    }
    // Analysed outside the lock, and kept: the next refresh analyses this stream again only if it
    // received something since.
    const uint64_t version = copy->version;
    auto kept = std::make_shared<const StreamAnalysis>(std::move(*copy).aggregates());
    out.push_back(*kept);
    std::lock_guard lock(mutex_);
    router_->keepAggregates(*at, version, std::move(kept));
  }
}

model::Trace IngestServer::snapshot(IngestHealth* health) const {
  std::lock_guard lock(mutex_);
  return router_->snapshot(health);
}

void IngestServer::stop() {
  std::call_once(stopped_, [this] {
    stopping_.store(true, std::memory_order_relaxed);
    if (receive_thread_.joinable()) receive_thread_.join();
    queue_.close();
    if (thread_.joinable()) thread_.join();
    if (receiver_) receiver_->close();
    if (tee_ && !tee_->close()) {
      std::lock_guard lock(mutex_);
      progress_.tee_failed = true;
    }
    tee_.reset();
  });
}

model::Trace IngestServer::take(IngestHealth* health) {
  stop();
  std::lock_guard lock(mutex_);
  return router_->take(health);
}

} // namespace gpuwise::advisor
