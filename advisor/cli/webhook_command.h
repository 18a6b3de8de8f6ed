// gpuwise webhook: the Kubernetes mutating admission webhook (advisor/webhook/README.md).
//
//   gpuwise webhook --listen ADDR --tls-cert F --tls-key F [--image IMG] [--classic-sidecar]
//                   [--metrics-port N] [--image-pull-policy P] [--sidecar-cpu Q]
//                   [--sidecar-memory Q] [--sidecar-memory-limit Q] [--max-body-bytes N]
//
// Serves until SIGINT/SIGTERM (taken with sigwait on the main thread, as `gpuwise advisor`
// does), logging one line per admission to io.err. Exits 0 after a signal, 2 on bad usage or a
// certificate, key or address it cannot use (one line naming it).
#pragma once

#include "advisor/cli/cli.h"

#include <CLI/CLI.hpp>

#include <cstddef>
#include <string>

namespace gpuwise::advisor {

struct WebhookOptions {
  std::string listen = ":8443";
  std::string tls_cert;
  std::string tls_key;
  std::string image; // empty: $GPUWISE_IMAGE, else the image of this version
  std::string image_pull_policy = "IfNotPresent";
  bool classic_sidecar = false;
  int metrics_port = 9464;
  std::string sidecar_cpu = "100m";
  std::string sidecar_memory = "256Mi";
  std::string sidecar_memory_limit = "2Gi";
  size_t max_body_bytes = 3u << 20;
};

// Declares the subcommand and, unless `with_options` is false (another command was named: cli.cpp),
// its options on `app`, bound to `options`.
CLI::App* addWebhookCommand(CLI::App& app, WebhookOptions& options, bool with_options = true);
int webhookCommand(const WebhookOptions& options, CliIo io);

// The image the webhook injects when --image is not given.
std::string defaultWebhookImage();

} // namespace gpuwise::advisor
