#include "advisor/webhook/pod_injector.h"

#include "advisor/webhook/injected_containers.h"
#include "advisor/webhook/json_patch.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace gpuwise::advisor {

using json = nlohmann::json;

namespace {

// A pod we cannot read as a pod: caught in planInjection, which skips it with the message.
struct MalformedPod : std::runtime_error {
  using std::runtime_error::runtime_error;
};

const json& member(const json& object, const char* key) {
  static const json kNull;
  if (!object.is_object()) return kNull;
  auto it = object.find(key);
  return it == object.end() ? kNull : *it;
}

// An optional list field: absent or null is empty; anything else but an array is malformed.
const json& listField(const json& object, const char* key, const std::string& where) {
  static const json kEmpty = json::array();
  const json& v = member(object, key);
  if (v.is_null()) return kEmpty;
  if (!v.is_array()) throw MalformedPod(where + "." + key + " is not a list");
  return v;
}

std::string stringField(const json& object, const char* key) {
  const json& v = member(object, key);
  return v.is_string() ? v.get<std::string>() : std::string();
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// A Kubernetes quantity ("1", "0", "500m", "2e3", or a JSON number) is non-zero when any digit of
// its number part is. Anything unreadable counts as non-zero: the scheduler will judge it, and a
// container that really asks for a GPU must not be missed.
bool nonZeroQuantity(const json& q) {
  if (q.is_number()) return q.get<double>() != 0.0;
  if (!q.is_string()) return false;
  const std::string s = q.get<std::string>();
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  bool digits = false;
  for (; i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.'); ++i) {
    if (s[i] >= '1' && s[i] <= '9') return true;
    digits = digits || s[i] == '0';
  }
  return !digits;
}

bool hasGpu(const json& resources_map) {
  if (!resources_map.is_object()) return false;
  for (auto it = resources_map.begin(); it != resources_map.end(); ++it)
    if (isGpuResource(it.key()) && nonZeroQuantity(it.value())) return true;
  return false;
}

bool optedOut(const json& annotations) {
  std::string v = lower(stringField(annotations, kInjectAnnotation));
  return v == "false" || v == "disabled";
}

// The first name gpuwise would add that the pod already uses, or empty.
std::string takenName(const json& spec, const std::vector<size_t>& gpu_indices,
                      const InjectionConfig& config) {
  for (const auto& v : listField(spec, "volumes", "spec"))
    if (stringField(v, "name") == kVolumeName)
      return std::string("a volume named ") + kVolumeName + " exists";
  for (const char* list : {"initContainers", "containers"}) {
    for (const auto& c : listField(spec, list, "spec")) {
      std::string name = stringField(c, "name");
      if (name == kInstallContainer || name == kAdvisorContainer)
        return "a container named " + name + " exists";
    }
  }
  const json& containers = listField(spec, "containers", "spec");
  for (size_t i : gpu_indices) {
    for (const auto& m : listField(containers[i], "volumeMounts", "container"))
      if (stringField(m, "mountPath") == config.mount_path)
        return "container " + stringField(containers[i], "name") + " already mounts " +
               config.mount_path;
  }
  return {};
}

// Why the advisor cannot serve metrics in this pod, or empty.
std::string metricsObstacle(const json& spec, const InjectionConfig& config) {
  if (config.metrics_port <= 0) return {};
  if (member(spec, "hostNetwork") == true)
    return "the pod uses the host network: no metrics port (it could collide on the node)";
  for (const char* list : {"initContainers", "containers"}) {
    for (const auto& c : listField(spec, list, "spec")) {
      for (const auto& p : listField(c, "ports", "container")) {
        if (member(p, "containerPort") == config.metrics_port)
          return "container " + stringField(c, "name") + " uses port " +
                 std::to_string(config.metrics_port) + ": the advisor serves no metrics";
      }
    }
  }
  return {};
}

// The downward-API path of `key` in the pod's labels or annotations.
std::string metadataPath(const char* map, const std::string& key) {
  return std::string("metadata.") + map + "['" + key + "']";
}

bool isDecimal(const std::string& s) {
  return !s.empty() && s.size() <= 9 &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

// Where the pod's job name and rank are (injection_config.h: kJobAnnotation, kJobNameLabels,
// kPodIndexLabels). Only keys with a non-empty value count: the downward API resolves them later.
PodJob podJob(const json& metadata, const json& containers, const std::vector<size_t>& gpu) {
  PodJob job;
  const json& labels = member(metadata, "labels");
  if (!stringField(member(metadata, "annotations"), kJobAnnotation).empty()) {
    job.job_field = metadataPath("annotations", kJobAnnotation);
  } else {
    for (const char* label : kJobNameLabels) {
      if (stringField(labels, label).empty()) continue;
      job.job_field = metadataPath("labels", label);
      break;
    }
  }
  for (size_t i : gpu) {
    const std::string where = "container " + stringField(containers[i], "name");
    for (const auto& e : listField(containers[i], "env", where)) {
      if (stringField(e, "name") != "RANK") continue;
      if (std::string v = stringField(e, "value"); isDecimal(v) && job.rank_value.empty())
        job.rank_value = v;
    }
  }
  if (!job.rank_value.empty()) return job;
  for (const char* label : kPodIndexLabels) {
    if (!isDecimal(stringField(labels, label))) continue;
    job.rank_field = metadataPath("labels", label);
    break;
  }
  return job;
}

void patchGpuContainer(const json& pod, size_t index, const json& container,
                       const InjectionConfig& config, const PodJob& job, JsonPatch& patch,
                       InjectionPlan& plan) {
  const std::string name = stringField(container, "name");
  const std::string base = "/spec/containers/" + std::to_string(index);
  patch.append(pod, base + "/volumeMounts", gpuContainerMount(config));

  const json& env = listField(container, "env", "container " + name);
  for (json var : gpuContainerEnv(config, name, job)) {
    const std::string var_name = var["name"].get<std::string>();
    auto existing = std::find_if(env.begin(), env.end(),
                                 [&](const json& e) { return stringField(e, "name") == var_name; });
    if (existing == env.end()) {
      patch.append(pod, base + "/env", std::move(var));
      continue;
    }
    if (var_name != "LD_PRELOAD") {
      plan.notes.push_back("container " + name + " sets " + var_name + ": kept");
      continue;
    }
    const json& value = member(*existing, "value");
    if (!member(*existing, "valueFrom").is_null() && value.is_null()) {
      plan.notes.push_back("container " + name +
                           " sets LD_PRELOAD through valueFrom: kept, so gpuwise sees only what "
                           "CUPTI records (no host-side API timing)");
      continue;
    }
    std::string merged =
        mergeLdPreload(value.is_string() ? value.get<std::string>() : "", config.shimPath());
    if (!value.is_string() || merged != value.get<std::string>()) {
      auto k = static_cast<size_t>(existing - env.begin());
      // "add" replaces a present member and creates an absent one ({name} without value).
      patch.add(base + "/env/" + std::to_string(k) + "/value", merged);
    }
  }
}

InjectionPlan plan(const json& pod, const InjectionConfig& config) {
  InjectionPlan p;
  if (!pod.is_object()) throw MalformedPod("the object is not a JSON object");
  const json& metadata = member(pod, "metadata");
  if (!metadata.is_null() && !metadata.is_object()) throw MalformedPod("metadata is not an object");
  const json& annotations = member(metadata, "annotations");
  const json& spec = member(pod, "spec");
  if (!spec.is_object()) throw MalformedPod("spec is missing or not an object");

  if (optedOut(annotations)) {
    p.reason = std::string("opted out (annotation ") + kInjectAnnotation + ")";
    return p;
  }
  if (stringField(annotations, kStatusAnnotation) == "injected") {
    p.reason = "already injected";
    return p;
  }
  if (stringField(member(spec, "os"), "name") == "windows") {
    p.reason = "a Windows pod";
    return p;
  }

  const json& containers = listField(spec, "containers", "spec");
  std::vector<size_t> gpu;
  for (size_t i = 0; i < containers.size(); ++i) {
    const json& c = containers[i];
    if (!c.is_object())
      throw MalformedPod("spec.containers[" + std::to_string(i) + "] is not an object");
    const json& resources = member(c, "resources");
    if (hasGpu(member(resources, "limits")) || hasGpu(member(resources, "requests"))) {
      gpu.push_back(i);
      p.gpu_containers.push_back(stringField(c, "name"));
    }
  }
  if (gpu.empty()) {
    p.reason = "no container requests nvidia.com/gpu or nvidia.com/mig-*";
    return p;
  }
  if (std::string taken = takenName(spec, gpu, config); !taken.empty()) {
    p.reason = "not injected: " + taken;
    return p;
  }

  SidecarOptions sidecar;
  sidecar.job = podJob(metadata, containers, gpu);
  if (std::string obstacle = metricsObstacle(spec, config); !obstacle.empty()) {
    sidecar.metrics = false;
    p.notes.push_back(obstacle);
  }
  if (std::string wanted = stringField(annotations, kReportVolumeAnnotation); !wanted.empty()) {
    bool found = false;
    for (const auto& v : listField(spec, "volumes", "spec"))
      found = found || stringField(v, "name") == wanted;
    if (found)
      sidecar.report_volume = wanted;
    else
      p.notes.push_back(std::string(kReportVolumeAnnotation) + " names no volume of the pod (" +
                        wanted + "): reports stay in the pod's " + kVolumeName + " volume");
  }

  JsonPatch patch;
  if (metadata.is_null()) patch.add("/metadata", json::object());
  patch.addMember(pod, "/metadata/annotations", kStatusAnnotation, "injected");
  if (!config.version.empty())
    patch.addMember(pod, "/metadata/annotations", "gpuwise.io/version", config.version);
  patch.addMember(pod, "/metadata/labels", kInjectedLabel, "true");
  patch.append(pod, "/spec/volumes", gpuwiseVolume());
  for (size_t k = 0; k < gpu.size(); ++k)
    patchGpuContainer(pod, gpu[k], containers[gpu[k]], config, sidecar.job, patch, p);
  // Ours first: the shim is in place and the advisor listening before any other container runs
  // (user init containers included). A classic sidecar is a regular container, appended last so
  // no index used above moves.
  patch.insert(pod, "/spec/initContainers", 0, installContainer(config));
  if (config.classic_sidecar)
    patch.append(pod, "/spec/containers", advisorContainer(config, sidecar));
  else
    patch.insert(pod, "/spec/initContainers", 1, advisorContainer(config, sidecar));

  p.inject = true;
  std::string names;
  for (const auto& n : p.gpu_containers)
    names += (names.empty() ? "" : ",") + n;
  p.reason = "injected into " + names +
             (config.classic_sidecar ? " (classic sidecar)" : " (native sidecar)");
  p.patch = patch.ops();
  return p;
}

} // namespace

bool isGpuResource(const std::string& name) {
  return name == "nvidia.com/gpu" || name == "nvidia.com/gpu.shared" ||
         name.rfind("nvidia.com/mig-", 0) == 0;
}

bool requestsGpu(const json& container) {
  const json& resources = member(container, "resources");
  return hasGpu(member(resources, "limits")) || hasGpu(member(resources, "requests"));
}

InjectionPlan planInjection(const json& pod, const InjectionConfig& config) {
  try {
    return plan(pod, config);
  } catch (const std::exception& e) {
    InjectionPlan skipped;
    skipped.reason = std::string("not a readable pod: ") + e.what();
    return skipped;
  }
}

} // namespace gpuwise::advisor
