// Decides whether a Pod gets gpuwise, and builds the JSON Patch that injects it (the layout is in
// injection_config.h). A pure function of the pod and the configuration: no I/O, no clock, any
// thread, never throws (a pod it cannot read is skipped, with the reason).
//
// A pod is injected when at least one of its containers requests an NVIDIA GPU (`nvidia.com/gpu`,
// `nvidia.com/gpu.shared` from time-slicing, or any `nvidia.com/mig-*` profile) in its limits or
// requests, with a non-zero quantity. It is left alone, with the reason, when:
//   - it opted out (annotation gpuwise.io/inject: "false");
//   - it is already injected (annotation gpuwise.io/status: "injected"), so reinvocation and
//     replayed requests change nothing;
//   - one of the names or paths gpuwise would add is taken (a volume "gpuwise", a container
//     "gpuwise-install" or "gpuwise-advisor", a GPU container that mounts something at /gpuwise);
//   - it is a Windows pod, or it has no container requesting a GPU, or it is not a readable pod.
// Whether the namespace is labelled gpuwise.io/inject=enabled is the API server's business (the
// MutatingWebhookConfiguration's namespaceSelector): an AdmissionReview does not carry it.
//
// Variables a GPU container already sets are kept (the user's choice wins), except LD_PRELOAD: the
// shim is appended to a literal value (`env[].value`); one set through `valueFrom` cannot be
// merged and is kept, and the container then gets the CUPTI tier only (CUDA_INJECTION64_PATH),
// which the plan's notes say. LD_PRELOAD set only by the image (Dockerfile ENV) is not visible
// here and is overridden by the container's env, as Kubernetes does for every variable.
#pragma once

#include "advisor/webhook/injection_config.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace gpuwise::advisor {

struct InjectionPlan {
  bool inject = false;
  std::string reason;                             // why skipped, or what was injected (one line)
  std::vector<std::string> gpu_containers;        // names, in spec order
  std::vector<std::string> notes;                 // things the user should know (become warnings)
  nlohmann::json patch = nlohmann::json::array(); // RFC 6902 operations; empty when skipped
};

InjectionPlan planInjection(const nlohmann::json& pod, const InjectionConfig& config);

// True when `container` asks for a non-zero quantity of an NVIDIA GPU or MIG resource.
bool requestsGpu(const nlohmann::json& container);
// True for nvidia.com/gpu, nvidia.com/gpu.shared and nvidia.com/mig-<profile>.
bool isGpuResource(const std::string& resource_name);

} // namespace gpuwise::advisor
