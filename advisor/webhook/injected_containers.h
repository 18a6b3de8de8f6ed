// The Kubernetes objects gpuwise adds to a pod, as JSON: the shared volume, the installer init
// container, the advisor sidecar, and what a GPU container gets (mount, environment). Pure
// functions of the configuration; pod_injector.cpp decides where they go.
#pragma once

#include "advisor/webhook/injection_config.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace gpuwise::advisor {

// Where the pod's job name and rank come from (pod_injector.cpp picks them); empty: unknown, the
// variable is not set.
struct PodJob {
  std::string job_field;  // downward-API path: metadata.labels['<label>'] or the annotation's
  std::string rank_value; // the first GPU container's literal RANK
  std::string rank_field; // else the downward-API path of a pod index label
};

struct SidecarOptions {
  bool metrics = true;       // false: no port and no --metrics-addr (hostNetwork, port taken)
  std::string report_volume; // a pod volume to write the reports to, empty: the shared volume
  PodJob job;
};

nlohmann::json gpuwiseVolume();
nlohmann::json installContainer(const InjectionConfig& config);
nlohmann::json advisorContainer(const InjectionConfig& config, const SidecarOptions& options);

// The mount every GPU container gets (read-only: the shim cannot be changed by the application,
// and connecting to the advisor's socket needs no write access to the filesystem).
nlohmann::json gpuContainerMount(const InjectionConfig& config);

// The variables a GPU container gets, in order; LD_PRELOAD is first and carries only the shim
// (pod_injector.cpp merges it with a value the container already has).
std::vector<nlohmann::json> gpuContainerEnv(const InjectionConfig& config,
                                            const std::string& container_name,
                                            const PodJob& job = {});

// `existing` LD_PRELOAD with the shim appended (separated by ':'), or unchanged when the shim is
// already in it. LD_PRELOAD accepts ':' or ' ' between entries; we write ':'.
std::string mergeLdPreload(const std::string& existing, const std::string& shim);

} // namespace gpuwise::advisor
