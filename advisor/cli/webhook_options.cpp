// The webhook command's options and their declaration on the command line: in the executable
// itself, while webhookCommand (the HTTPS server, OpenSSL) is in lib/libgpuwise_live.so
// (live_commands.h).
#include "advisor/cli/webhook_command.h"

#include "advisor/report/report_json.h"

#include <cstdlib>

namespace gpuwise::advisor {

std::string defaultWebhookImage() {
  if (const char* env = std::getenv("GPUWISE_IMAGE"); env && *env) return env;
  return std::string("ghcr.io/gpuwise/gpuwise:") + gpuwiseVersion();
}

CLI::App* addWebhookCommand(CLI::App& app, WebhookOptions& o, bool with_options) {
  auto* cmd = app.add_subcommand(
      "webhook", "Serve the Kubernetes mutating admission webhook over HTTPS until SIGTERM");
  if (!with_options) return cmd;
  cmd->add_option("--listen", o.listen, "HOST:PORT, [IPV6]:PORT or :PORT")->capture_default_str();
  cmd->add_option("--tls-cert", o.tls_cert, "PEM certificate (chain) file")->required();
  cmd->add_option("--tls-key", o.tls_key, "PEM private key file")->required();
  cmd->add_option("--image", o.image,
                  "Image of the installer and the advisor sidecar (default: $GPUWISE_IMAGE, "
                  "else ghcr.io/gpuwise/gpuwise:<version>)");
  cmd->add_option("--image-pull-policy", o.image_pull_policy, "Always, IfNotPresent or Never")
      ->capture_default_str()
      ->check(CLI::IsMember({"Always", "IfNotPresent", "Never"}));
  cmd->add_flag("--classic-sidecar", o.classic_sidecar,
                "Inject the advisor as a regular container (clusters before Kubernetes 1.29; "
                "Jobs then need the sidecar stopped to complete)");
  cmd->add_option("--metrics-port", o.metrics_port,
                  "The advisor's Prometheus port in each pod (0: none)")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  cmd->add_option("--sidecar-cpu", o.sidecar_cpu, "CPU request of the advisor sidecar")
      ->capture_default_str();
  cmd->add_option("--sidecar-memory", o.sidecar_memory, "Memory request of the advisor sidecar")
      ->capture_default_str();
  cmd->add_option("--sidecar-memory-limit", o.sidecar_memory_limit,
                  "Memory limit of the advisor sidecar")
      ->capture_default_str();
  cmd->add_option("--max-body-bytes", o.max_body_bytes, "Largest AdmissionReview accepted")
      ->capture_default_str()
      ->check(CLI::Range(size_t{1024}, size_t{64} << 20));
  return cmd;
}

} // namespace gpuwise::advisor
