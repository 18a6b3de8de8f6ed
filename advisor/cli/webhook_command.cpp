#include "advisor/cli/webhook_command.h"

#include "advisor/cli/commands.h"
#include "advisor/report/report_json.h"
#include "advisor/webhook/webhook_server.h"

#include <csignal>
#include <cstdlib>
#include <pthread.h>

namespace gpuwise::advisor {

namespace {

// A Kubernetes resource quantity as the API server accepts it ("100m", "256Mi", "1.5", "2e3"):
// checked here so a typo fails at start-up, not in every pod the API server then refuses.
bool isQuantity(const std::string& q) {
  static const char* kSuffixes[] = {"",  "m",  "k",  "M",  "G",  "T",  "P",
                                    "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  size_t i = 0;
  bool digits = false, dot = false;
  for (; i < q.size(); ++i) {
    if (q[i] >= '0' && q[i] <= '9')
      digits = true;
    else if (q[i] == '.' && !dot)
      dot = true;
    else
      break;
  }
  if (!digits) return false;
  std::string suffix = q.substr(i);
  if (suffix.size() > 1 && (suffix[0] == 'e' || suffix[0] == 'E')) {
    for (size_t k = 1; k < suffix.size(); ++k)
      if (suffix[k] < '0' || suffix[k] > '9') return false;
    return true;
  }
  for (const char* s : kSuffixes)
    if (suffix == s) return true;
  return false;
}

} // namespace

int webhookCommand(const WebhookOptions& o, CliIo io) {
  auto fail = [&](const std::string& line) {
    logLine(io.err, "webhook", line);
    return kExitUsage;
  };
  for (const auto& [flag, value] :
       {std::pair<const char*, const std::string&>{"--sidecar-cpu", o.sidecar_cpu},
        {"--sidecar-memory", o.sidecar_memory},
        {"--sidecar-memory-limit", o.sidecar_memory_limit}}) {
    if (!isQuantity(value))
      return fail(std::string(flag) + " '" + value + "' is not a Kubernetes quantity");
  }

  WebhookServer::Options so;
  so.listen = o.listen;
  so.cert_file = o.tls_cert;
  so.key_file = o.tls_key;
  so.injection.image = o.image.empty() ? defaultWebhookImage() : o.image;
  so.injection.image_pull_policy = o.image_pull_policy;
  so.injection.classic_sidecar = o.classic_sidecar;
  so.injection.metrics_port = o.metrics_port;
  so.injection.sidecar_cpu_request = o.sidecar_cpu;
  so.injection.sidecar_memory_request = o.sidecar_memory;
  so.injection.sidecar_memory_limit = o.sidecar_memory_limit;
  so.injection.version = gpuwiseVersion();
  so.limits.max_body_bytes = o.max_body_bytes;
  std::ostream& err = io.err;
  so.log = [&err](const std::string& line) { logLine(err, "webhook", line); };

  // Block the stop signals before any thread starts, so they all inherit the mask and only the
  // sigwait below takes SIGINT/SIGTERM.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  sigset_t previous;
  pthread_sigmask(SIG_BLOCK, &stop_signals, &previous);

  std::string error;
  auto server = WebhookServer::start(so, &error);
  if (!server) {
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    return fail(error);
  }
  const std::string host =
      server->host().find(':') != std::string::npos ? "[" + server->host() + "]" : server->host();
  logLine(io.err, "webhook",
          "listening on https://" + host + ":" + std::to_string(server->port()) + " (image " +
              so.injection.image + ", " + (o.classic_sidecar ? "classic" : "native") +
              " sidecar, metrics port " +
              (o.metrics_port > 0 ? std::to_string(o.metrics_port) : std::string("none")) + ")");

  int signal = 0;
  sigwait(&stop_signals, &signal);
  server->stop();
  auto c = server->counters();
  logLine(io.err, "webhook",
          std::string("stopping on ") + (signal == SIGINT ? "SIGINT" : "SIGTERM") + " (" +
              std::to_string(c.reviews) + " reviews, " + std::to_string(c.patched) +
              " pods injected, " + std::to_string(c.rejected) + " requests rejected)");
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return 0;
}

} // namespace gpuwise::advisor
