// The advisor's Prometheus endpoint: GET /metrics (the exposition), GET /healthz ("ok"), 404 for
// anything else, over plain HTTP (cpp-httplib) on one address. Slow, idle or numerous clients
// cannot hold it: each connection has its own thread, requests a deadline, and connections are
// capped in all and per client address (advisor/net/guarded_http_server.h).
//
// Threads: start() binds and spawns two threads (and each connection gets one). Connection
// threads never compute: they hand out the latest exposition text. The refresh thread alone
// calls `produce` (snapshot the ingest, analyse, build the text), so the analysis never runs on
// the ingest thread and never twice at once. A scrape that finds the text older than `max_age`
// wakes the refresh thread; when the last produce() took at most scrape_wait / 4 it waits for the
// fresher text (a scrape sees figures at most ~max_age old), otherwise (a long run whose analysis
// takes seconds) it answers at once with the previous text and the refresh serves the next scrape
// (figures one scrape interval old). The analysis runs only when scrapes ask for it, never twice
// at once, with `min_pause` between runs.
// Nothing here takes an ingest lock; `produce` does, for as long as its snapshot copies.
// stop() is idempotent and joins both threads; the destructor calls it.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

namespace gpuwise::advisor::metrics {

class MetricsServer {
public:
  struct Options {
    // ":9464" all interfaces, "127.0.0.1:9464", "[::1]:9464"; port 0 picks a free one.
    std::string address;
    // Builds the exposition text; called on the refresh thread only. May throw: the error is
    // logged through `log` and the previous text kept.
    std::function<std::string()> produce;
    std::function<void(const std::string& line)> log; // nullptr: stderr
    std::chrono::milliseconds max_age{1000};
    std::chrono::milliseconds scrape_wait{5000};
    std::chrono::milliseconds min_pause{200};
  };

  // Binds, builds the first text and starts serving; nullptr with `error` (one line) when the
  // address is malformed or cannot be bound.
  static std::unique_ptr<MetricsServer> start(Options options, std::string* error);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  int port() const;
  std::string host() const;
  void stop();

  struct Stats {
    uint64_t scrapes = 0;
    uint64_t refreshes = 0;
    std::chrono::microseconds last_refresh{0}; // how long the last produce() took
  };
  Stats stats() const;

private:
  struct Impl;
  explicit MetricsServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace gpuwise::advisor::metrics
