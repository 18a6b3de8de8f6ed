#include "advisor/webhook/webhook_server.h"

#include "advisor/net/guarded_http_server.h"
#include "advisor/net/listen_address.h"
#include "advisor/webhook/admission_review.h"
#include "advisor/webhook/tls_credentials.h"
#include "advisor/webhook/webhook_metrics.h"

#include <httplib.h>

#include <chrono>
#include <mutex>
#include <sys/socket.h>
#include <thread>

namespace gpuwise::advisor {

namespace {

constexpr long long kReadyMarginSeconds = 60;

// The webhook's clients are the API servers: a few addresses, each opening as many connections
// as pods are created at once (HTTP/1.1, one review per connection at a time), and keeping them
// alive between reviews. The per-client cap leaves a burst of 500 pod creations from one API
// server room; the total bounds threads, descriptors and memory (~70 KiB a TLS connection, so
// 1024 of them fit the Deployment's 256 MiB). Idle keep-alive connections are closed first when a
// cap is reached, and a request must arrive whole within the API server's own budget
// (timeoutSeconds: 5 in the manifests) or it is of no use to anyone.
ConnectionLimits webhookConnectionLimits() {
  ConnectionLimits l;
  l.request_deadline = std::chrono::seconds(5);
  l.idle_timeout = std::chrono::seconds(30);
  l.write_timeout = std::chrono::seconds(10);
  l.max_connections = 1024;
  l.max_per_client = 512;
  return l;
}

void reuseAddress(socket_t sock) {
  // SO_REUSEADDR only: httplib's default adds SO_REUSEPORT, which lets a second webhook bind the
  // same port silently instead of failing.
  int yes = 1;
  ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
}

std::string oneLine(const std::string& s, size_t max = 200) {
  std::string out;
  for (char c : s.substr(0, max))
    out += (c == '\n' || c == '\r') ? ' ' : c;
  return out;
}

} // namespace

struct WebhookServer::Impl {
  Options options;
  std::unique_ptr<TlsCredentials> credentials;
  std::unique_ptr<GuardedSslServer> server;
  std::thread listener;
  std::string host;
  int port = 0;
  std::mutex log_mutex;
  std::atomic<uint64_t> reviews{0}, patched{0}, rejected{0};
  WebhookMetrics metrics;

  void log(const std::string& line) {
    if (!options.log) return;
    std::lock_guard<std::mutex> lock(log_mutex);
    options.log(line);
  }

  WebhookMetrics::Result reject(httplib::Response& res, const std::string& why) {
    rejected.fetch_add(1, std::memory_order_relaxed);
    res.status = 400;
    // The rest of an unread body is still on the connection: do not read it as a next request.
    res.set_header("Connection", "close");
    res.set_content("gpuwise webhook: " + why + "\n", "text/plain");
    log("rejected request: " + why);
    return WebhookMetrics::Result::Rejected;
  }

  WebhookMetrics::Result mutate(const httplib::Request& req, httplib::Response& res,
                                const httplib::ContentReader& reader) {
    const size_t limit = options.limits.max_body_bytes;
    std::string type = req.get_header_value("Content-Type");
    if (type.rfind("application/json", 0) != 0)
      return reject(res, "Content-Type is '" + oneLine(type, 80) + "', not application/json");
    if (req.has_header("Content-Length")) {
      uint64_t declared = req.get_header_value<uint64_t>("Content-Length");
      if (declared > limit)
        return reject(res, "the body has " + std::to_string(declared) + " bytes, more than the " +
                               std::to_string(limit) + " allowed");
    }
    std::string body;
    bool too_big = false;
    bool complete = reader([&](const char* data, size_t length) {
      if (body.size() + length > limit) {
        too_big = true;
        return false;
      }
      body.append(data, length);
      return true;
    });
    if (too_big)
      return reject(res, "the body is more than the " + std::to_string(limit) + " bytes allowed");
    if (!complete) return reject(res, "the body ended early");

    AdmissionResult r = reviewAdmission(body, options.injection, options.limits);
    res.status = r.http_status;
    res.set_content(r.body, r.content_type.c_str());
    if (r.http_status == 200) {
      reviews.fetch_add(1, std::memory_order_relaxed);
      if (r.patched) patched.fetch_add(1, std::memory_order_relaxed);
      log(r.log_line);
      return r.patched ? WebhookMetrics::Result::Injected : WebhookMetrics::Result::Skipped;
    }
    rejected.fetch_add(1, std::memory_order_relaxed);
    res.set_header("Connection", "close");
    log(r.log_line);
    return r.http_status >= 500 ? WebhookMetrics::Result::Error : WebhookMetrics::Result::Rejected;
  }
};

WebhookServer::WebhookServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

WebhookServer::~WebhookServer() {
  stop();
}

std::unique_ptr<WebhookServer> WebhookServer::start(Options options, std::string* error) {
  auto impl = std::make_unique<Impl>();
  impl->options = std::move(options);
  Impl* self = impl.get();
  const Options& o = impl->options;

  if (!splitListenAddress(o.listen, &impl->host, &impl->port)) {
    *error = "--listen '" + o.listen + "' is not HOST:PORT, [IPV6]:PORT or :PORT";
    return nullptr;
  }
  impl->credentials = TlsCredentials::load(
      o.cert_file, o.key_file, [self](const std::string& l) { self->log(l); }, error);
  if (!impl->credentials) return nullptr;

  std::string tls_error;
  impl->server = std::make_unique<GuardedSslServer>(
      [&](SSL_CTX& ctx) { return self->credentials->install(&ctx, &tls_error); },
      webhookConnectionLimits(), [self](const std::string& l) { self->log(l); });
  if (!impl->server->is_valid()) {
    *error = tls_error.empty() ? "cannot create the TLS context" : tls_error;
    return nullptr;
  }

  GuardedSslServer& s = *impl->server;
  s.set_socket_options(reuseAddress);
  // httplib writes the headers and the body separately: with Nagle on, the body waits for the
  // client's delayed ACK (~40 ms per review, measured with curl), a fair part of the API
  // server's timeout budget for every GPU pod.
  s.set_tcp_nodelay(true);
  // httplib's own cap sits above ours, so our check (400 with a reason) always comes first.
  s.set_payload_max_length(o.limits.max_body_bytes + 1);
  s.Post("/mutate", [self](const httplib::Request& req, httplib::Response& res,
                           const httplib::ContentReader& reader) {
    const auto start = std::chrono::steady_clock::now();
    const WebhookMetrics::Result result = self->mutate(req, res, reader);
    self->metrics.record(
        result, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  });
  // Plain Prometheus text over the same TLS port (the ServiceMonitor scrapes it with the CA).
  s.Get("/metrics", [self](const httplib::Request&, httplib::Response& res) {
    res.set_content(self->metrics.exposition(self->options.injection.version),
                    "text/plain; version=0.0.4; charset=utf-8");
  });
  s.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("ok\n", "text/plain");
  });
  s.Get("/readyz", [self](const httplib::Request&, httplib::Response& res) {
    long long left = self->credentials->secondsToExpiry();
    if (left > kReadyMarginSeconds) {
      res.set_content("ok\n", "text/plain");
    } else {
      res.status = 503;
      res.set_content(left > 0 ? "the TLS certificate expires in " + std::to_string(left) + " s\n"
                               : std::string("the TLS certificate has expired\n"),
                      "text/plain");
    }
  });
  s.set_exception_handler(
      [self](const httplib::Request&, httplib::Response& res, const std::exception_ptr& e) {
        std::string what = "unknown exception";
        try {
          if (e) std::rethrow_exception(e);
        } catch (const std::exception& ex) {
          what = ex.what();
        } catch (...) {
        }
        res.status = 500;
        self->metrics.countError();
        res.set_content("gpuwise webhook: internal error: " + what + "\n", "text/plain");
        self->log("internal error: " + what);
      });

  impl->port = s.bindGuarded(impl->host, impl->port);
  if (impl->port == 0) {
    *error = "cannot listen on " + o.listen + " (address in use, or not an address of this host)";
    return nullptr;
  }
  impl->listener = std::thread([self] { self->server->listen_after_bind(); });
  return std::unique_ptr<WebhookServer>(new WebhookServer(std::move(impl)));
}

void WebhookServer::stop() {
  if (!impl_ || !impl_->server) return;
  impl_->server->stopAll();
  if (impl_->listener.joinable()) impl_->listener.join();
}

std::string WebhookServer::host() const {
  return impl_->host;
}

int WebhookServer::port() const {
  return impl_->port;
}

WebhookServer::Counters WebhookServer::counters() const {
  return {impl_->reviews.load(), impl_->patched.load(), impl_->rejected.load()};
}

} // namespace gpuwise::advisor
