#include "advisor/metrics/metrics_server.h"

#include "advisor/metrics/exposition_builder.h"
#include "advisor/net/guarded_http_server.h"
#include "advisor/net/listen_address.h"

#include <httplib.h>

#include <condition_variable>
#include <iostream>
#include <mutex>
#include <sys/socket.h>
#include <thread>

namespace gpuwise::advisor::metrics {

using Clock = std::chrono::steady_clock;

namespace {

// Who scrapes a sidecar: one or two Prometheus servers, now and then a person with curl. The caps
// leave them ample room and bound what anyone else on the cluster network can hold; idle
// keep-alive connections (Prometheus keeps one between scrapes) are closed first when a cap is
// reached, so they never stand in the way of a scrape.
ConnectionLimits metricsConnectionLimits() {
  ConnectionLimits l;
  l.request_deadline = std::chrono::seconds(5); // a scrape is one small GET
  l.idle_timeout = std::chrono::seconds(90);    // longer than the usual 15-60 s scrape interval
  l.write_timeout = std::chrono::seconds(10);
  l.max_connections = 256;
  l.max_per_client = 16;
  return l;
}

} // namespace

struct MetricsServer::Impl {
  Options options;
  GuardedServer server{metricsConnectionLimits(),
                       [this](const std::string& l) { log("metrics: " + l); }};
  std::string host;
  int port = 0;
  std::thread listener, refresher;

  mutable std::mutex mutex;
  std::condition_variable wanted, refreshed;
  std::shared_ptr<const std::string> text = std::make_shared<const std::string>();
  Clock::time_point built_at{}; // when the snapshot behind `text` was taken
  uint64_t generation = 0;
  bool want = false, stopping = false;
  Stats stats;

  void log(const std::string& line) {
    if (options.log)
      options.log(line);
    else
      std::cerr << ("gpuwise advisor: " + line + "\n") << std::flush; // one write: one whole line
  }

  // Runs produce() once outside the lock and publishes its text.
  void refreshOnce() {
    auto started = Clock::now();
    std::shared_ptr<const std::string> fresh;
    try {
      fresh = std::make_shared<const std::string>(options.produce());
    } catch (const std::exception& e) {
      log(std::string("metrics: cannot build the exposition: ") + e.what());
    } catch (...) {
      log("metrics: cannot build the exposition: unknown exception");
    }
    auto took = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - started);
    std::lock_guard lock(mutex);
    if (fresh) text = std::move(fresh);
    built_at = started;
    ++generation;
    ++stats.refreshes;
    stats.last_refresh = took;
    refreshed.notify_all();
  }

  void refreshLoop() {
    std::unique_lock lock(mutex);
    while (!stopping) {
      wanted.wait(lock, [&] { return stopping || want; });
      if (stopping) break;
      want = false;
      lock.unlock();
      refreshOnce();
      lock.lock();
      wanted.wait_for(lock, options.min_pause, [&] { return stopping; });
    }
  }

  std::shared_ptr<const std::string> current() {
    std::unique_lock lock(mutex);
    ++stats.scrapes;
    if (Clock::now() - built_at > options.max_age && !stopping) {
      want = true;
      wanted.notify_all();
      // A quick analysis (most runs): wait for it and answer fresh. A slow one (a long run whose
      // refresh takes seconds): answer now with the previous text, the refresh it started
      // serves the next scrape, so a scrape never waits on the analysis of a whole long job.
      if (stats.last_refresh * 4 <= options.scrape_wait) {
        uint64_t seen = generation;
        refreshed.wait_for(lock, options.scrape_wait,
                           [&] { return stopping || generation != seen; });
      }
    }
    return text;
  }
};

MetricsServer::MetricsServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

MetricsServer::~MetricsServer() {
  stop();
}

std::unique_ptr<MetricsServer> MetricsServer::start(Options o, std::string* error) {
  auto impl = std::make_unique<Impl>();
  if (!splitListenAddress(o.address, &impl->host, &impl->port)) {
    *error = "--metrics-addr '" + o.address + "' is not HOST:PORT, [IPV6]:PORT or :PORT";
    return nullptr;
  }
  if (!o.produce) {
    *error = "metrics: no exposition producer";
    return nullptr;
  }
  impl->options = std::move(o);
  Impl* self = impl.get();
  GuardedServer& s = impl->server;
  // SO_REUSEADDR only: httplib's default SO_REUSEPORT would let a second advisor bind the same
  // port silently and take half the scrapes.
  s.set_socket_options([](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  s.set_tcp_nodelay(true);
  s.Get("/metrics", [self](const httplib::Request&, httplib::Response& res) {
    auto text = self->current();
    res.set_content(*text, kContentType);
  });
  s.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("ok\n", "text/plain");
  });
  s.set_exception_handler(
      [self](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
        res.status = 500;
        res.set_content("gpuwise advisor: internal error\n", "text/plain");
        self->log("metrics: internal error while answering a request");
      });

  impl->port = s.bindGuarded(impl->host, impl->port);
  if (impl->port == 0) {
    *error = "cannot listen on " + impl->options.address +
             " for --metrics-addr (address in use, or not an address of this host)";
    return nullptr;
  }
  impl->refreshOnce();
  impl->refresher = std::thread([self] { self->refreshLoop(); });
  impl->listener = std::thread([self] { self->server.listen_after_bind(); });
  return std::unique_ptr<MetricsServer>(new MetricsServer(std::move(impl)));
}

void MetricsServer::stop() {
  if (!impl_) return;
  {
    std::lock_guard lock(impl_->mutex);
    impl_->stopping = true;
    impl_->wanted.notify_all();
    impl_->refreshed.notify_all();
  }
  impl_->server.stopAll();
  if (impl_->listener.joinable()) impl_->listener.join();
  if (impl_->refresher.joinable()) impl_->refresher.join();
}

int MetricsServer::port() const {
  return impl_->port;
}

std::string MetricsServer::host() const {
  return impl_->host;
}

MetricsServer::Stats MetricsServer::stats() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->stats;
}

} // namespace gpuwise::advisor::metrics
