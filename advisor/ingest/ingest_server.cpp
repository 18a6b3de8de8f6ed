#include "advisor/ingest/ingest_server.h"

#include "transport/gwt_file.h"
#include "transport/zmq/endpoints.h"

#include <optional>

#include <pthread.h>

namespace gpuwise::advisor {

std::unique_ptr<IngestServer> IngestServer::start(const Options& options, std::string* error) {
  std::unique_ptr<IngestServer> s(new IngestServer());
  s->options_ = options;
  std::string bind_error;
  s->receiver_ = transport::PullReceiver::bind(options.endpoint, {}, &bind_error);
  if (!s->receiver_) {
    *error = "cannot listen on " + options.endpoint + ": " + bind_error;
    return nullptr;
  }
  if (!options.tee_path.empty()) {
    std::string tee_error;
    s->tee_ = transport::GwtWriter::create(options.tee_path, &tee_error);
    if (!s->tee_) {
      *error = options.tee_path + ": " + tee_error;
      s->receiver_->close();
      return nullptr;
    }
  }
  s->endpoint_ = s->receiver_->endpoint();
  s->router_ = std::make_unique<StreamRouter>(options.log, StreamRouter::kMaxStreams,
                                              options.window_events);
  s->progress_.last_message = std::chrono::steady_clock::now();
  s->thread_ = std::thread([raw = s.get()] { raw->run(); });
  return s;
}

IngestServer::~IngestServer() {
  stop();
}

std::string IngestServer::endpoint() const {
  return endpoint_;
}

void IngestServer::run() {
  pthread_setname_np(pthread_self(), "gpuwise-ingest");
  while (!stopping_.load(std::memory_order_relaxed)) {
    auto message = receiver_->receive(options_.poll);
    if (!message) continue;
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

std::vector<StreamAnalysis> IngestServer::streamAnalyses(IngestHealth* health) const {
  // One stream at a time: the lock is held while the stream is copied, and released while the
  // copy is analysed (30x longer: a refresh of 64 busy streams held ingest still for seconds).
  std::vector<StreamAnalysis> out;
  for (size_t i = 0;; ++i) {
    std::optional<FrozenStream> frozen;
    {
      std::lock_guard lock(mutex_);
      if (i >= router_->streamCount()) {
        router_->fillIngestHealth(health);
        return out;
      }
      frozen = router_->freezeStream(i, health);
    }
    out.push_back(std::move(*frozen).aggregates());
  }
}

model::Trace IngestServer::snapshot(IngestHealth* health) const {
  std::lock_guard lock(mutex_);
  return router_->snapshot(health);
}

void IngestServer::stop() {
  std::call_once(stopped_, [this] {
    stopping_.store(true, std::memory_order_relaxed);
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
