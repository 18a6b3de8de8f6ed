// The admission webhook's HTTPS server (cpp-httplib's SSLServer over OpenSSL):
//
//   POST /mutate    an AdmissionReview (admission_review.h does the work)
//   GET  /healthz   200 while the server runs (liveness)
//   GET  /readyz    200 while the served certificate is valid for more than a minute, else 503
//                   with the reason (readiness: a pod with an expired certificate gets no traffic)
//   anything else   404
//
// TLS 1.2 or newer only (tls_credentials.h), renewed certificates served without a restart.
// Bodies larger than WebhookLimits::max_body_bytes are refused with 400 as they arrive, before
// they are held in memory. Slow, idle or numerous clients cannot hold the server: a request
// (TLS handshake, head and body) must arrive within 5 s of its first byte, connections are capped
// in all and per client address, idle keep-alive connections go first (guarded_http_server.h).
//
// Threads: start() binds on the caller's thread and returns; one listener thread accepts, and
// each connection is served on a thread of its own. `log` is called from those threads, one line at
// a time (serialised here). stop() (or the destructor) ends the listener and joins it.
#pragma once

#include "advisor/webhook/injection_config.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace gpuwise::advisor {

class WebhookServer {
public:
  struct Options {
    std::string listen = "0.0.0.0:8443"; // HOST:PORT, [V6]:PORT or :PORT; port 0 picks one
    std::string cert_file, key_file;
    InjectionConfig injection;
    WebhookLimits limits;
    std::function<void(const std::string&)> log; // one line, no newline
  };
  struct Counters {
    uint64_t reviews = 0;  // answered 200
    uint64_t patched = 0;  // of which carried a patch
    uint64_t rejected = 0; // answered 400
  };

  // Loads the certificate, binds and starts serving; nullptr with `error` (one line naming the
  // file or the address) on failure.
  static std::unique_ptr<WebhookServer> start(Options options, std::string* error);
  ~WebhookServer();

  void stop();
  std::string host() const;
  int port() const;
  Counters counters() const;

private:
  struct Impl;
  explicit WebhookServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace gpuwise::advisor
