#include "advisor/webhook/injected_containers.h"

namespace gpuwise::advisor {

using json = nlohmann::json;

namespace {

json fieldRef(const std::string& name, const std::string& field) {
  return {{"name", name}, {"valueFrom", {{"fieldRef", {{"fieldPath", field}}}}}};
}

// Restricted Pod Security Standard: our containers run anywhere a restricted namespace allows.
// UID 65532 is the image's unprivileged user (containers/Dockerfile).
json restrictedSecurityContext() {
  return {{"runAsNonRoot", true},
          {"runAsUser", 65532},
          {"runAsGroup", 65532},
          {"allowPrivilegeEscalation", false},
          {"readOnlyRootFilesystem", true},
          {"capabilities", {{"drop", json::array({"ALL"})}}},
          {"seccompProfile", {{"type", "RuntimeDefault"}}}};
}

json advisorEnv(const PodJob& job) {
  json env = json::array({fieldRef("GPUWISE_POD", "metadata.name"),
                          fieldRef("GPUWISE_NAMESPACE", "metadata.namespace"),
                          fieldRef("GPUWISE_NODE", "spec.nodeName")});
  if (!job.job_field.empty()) env.push_back(fieldRef("GPUWISE_JOB", job.job_field));
  if (!job.rank_value.empty())
    env.push_back({{"name", "GPUWISE_RANK"}, {"value", job.rank_value}});
  else if (!job.rank_field.empty())
    env.push_back(fieldRef("GPUWISE_RANK", job.rank_field));
  return env;
}

} // namespace

json gpuwiseVolume() {
  return {{"name", kVolumeName}, {"emptyDir", json::object()}};
}

json installContainer(const InjectionConfig& c) {
  // umask 0: the training containers may run as any user; the socket directory and the reports
  // directory must be writable by the advisor and the socket connectable by everyone in the pod.
  // The emptyDir itself is world-writable, and nothing outside the pod sees it.
  std::string script = "umask 0000 && mkdir -p " + c.socketDir() + " " + c.reportDir() +
                       " && cp -R " + kImageShimDir + "/. " + c.mount_path + "/";
  return {{"name", kInstallContainer},
          {"image", c.image},
          {"imagePullPolicy", c.image_pull_policy},
          {"command", json::array({"/bin/sh", "-c", script})},
          {"resources",
           {{"requests", {{"cpu", "10m"}, {"memory", "16Mi"}}}, {"limits", {{"memory", "64Mi"}}}}},
          {"volumeMounts", json::array({{{"name", kVolumeName}, {"mountPath", c.mount_path}}})},
          {"securityContext", restrictedSecurityContext()},
          {"terminationMessagePolicy", "FallbackToLogsOnError"}};
}

json advisorContainer(const InjectionConfig& c, const SidecarOptions& o) {
  std::string report_dir = o.report_volume.empty() ? c.reportDir() : kReportVolumeMountPath;
  json args = json::array({"--listen", c.endpoint(), "--report-dir", report_dir});
  bool metrics = o.metrics && c.metrics_port > 0;
  if (metrics) {
    args.push_back("--metrics-addr");
    args.push_back("0.0.0.0:" + std::to_string(c.metrics_port));
  }
  json mounts = json::array({{{"name", kVolumeName}, {"mountPath", c.mount_path}}});
  if (!o.report_volume.empty())
    mounts.push_back({{"name", o.report_volume}, {"mountPath", kReportVolumeMountPath}});

  // `sh -c 'umask 0000 && exec gpuwise advisor "$@"' gpuwise-advisor ARGS...`: the socket the
  // advisor binds is created 0777, so a training container running as another user can connect.
  std::string script = std::string("umask 0000 && exec ") + kImageGpuwise + " advisor \"$@\"";
  json container = {
      {"name", kAdvisorContainer},
      {"image", c.image},
      {"imagePullPolicy", c.image_pull_policy},
      {"command", json::array({"/bin/sh", "-c", script, kAdvisorContainer})},
      {"args", args},
      {"env", advisorEnv(o.job)},
      {"resources",
       {{"requests", {{"cpu", c.sidecar_cpu_request}, {"memory", c.sidecar_memory_request}}},
        {"limits", {{"memory", c.sidecar_memory_limit}}}}},
      {"volumeMounts", mounts},
      {"securityContext", restrictedSecurityContext()},
      {"terminationMessagePolicy", "FallbackToLogsOnError"}};
  if (metrics) {
    container["ports"] = json::array(
        {{{"name", kMetricsPortName}, {"containerPort", c.metrics_port}, {"protocol", "TCP"}}});
  }
  // No startup probe: the shim's ZeroMQ socket connects lazily and queues (bounded) until the
  // advisor binds, so nothing waits for it, and a broken advisor can never hold training back.
  // Native sidecar (Kubernetes 1.29+): started before the main containers, stopped (SIGTERM, when
  // it writes the report) after they all end, and not counted for completion, so Jobs finish.
  if (!c.classic_sidecar) container["restartPolicy"] = "Always";
  return container;
}

json gpuContainerMount(const InjectionConfig& c) {
  return {{"name", kVolumeName}, {"mountPath", c.mount_path}, {"readOnly", true}};
}

std::vector<json> gpuContainerEnv(const InjectionConfig& c, const std::string& container_name,
                                  const PodJob& job) {
  std::vector<json> env{{{"name", "LD_PRELOAD"}, {"value", c.shimPath()}},
                        {{"name", "CUDA_INJECTION64_PATH"}, {"value", c.shimPath()}},
                        {{"name", "GPUWISE_ENDPOINT"}, {"value", c.endpoint()}},
                        fieldRef("GPUWISE_POD", "metadata.name"),
                        fieldRef("GPUWISE_NAMESPACE", "metadata.namespace"),
                        fieldRef("GPUWISE_NODE", "spec.nodeName"),
                        {{"name", "GPUWISE_CONTAINER"}, {"value", container_name}}};
  // The shim sends it in its Hello: the advisor's metrics label each process with its job.
  if (!job.job_field.empty()) env.push_back(fieldRef("GPUWISE_JOB", job.job_field));
  return env;
}

std::string mergeLdPreload(const std::string& existing, const std::string& shim) {
  // Already there as a whole entry: a replayed or re-invoked request changes nothing.
  size_t start = 0;
  while (start <= existing.size()) {
    size_t end = existing.find_first_of(": ", start);
    if (end == std::string::npos) end = existing.size();
    if (existing.compare(start, end - start, shim) == 0) return existing;
    start = end + 1;
  }
  size_t last = existing.find_last_not_of(": ");
  if (last == std::string::npos) return shim;
  return existing.substr(0, last + 1) + ":" + shim;
}

} // namespace gpuwise::advisor
