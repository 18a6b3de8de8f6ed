// What the admission webhook injects into a GPU pod, and the names it uses. One immutable value,
// built once from the `gpuwise webhook` flags and shared read-only by every request thread.
//
// The layout inside a pod (DESIGN.md, "platform team on Kubernetes"):
//
//   volume  gpuwise (emptyDir)                  mounted at /gpuwise everywhere
//     /gpuwise/libgpuwise.so, /gpuwise/deps/     the shim and its bundled libraries (init copies)
//     /gpuwise/sock/advisor                      the advisor's ipc:// socket (sidecar binds)
//     /gpuwise/reports/                          the per-job JSON and HTML reports
//   initContainers[0]  gpuwise-install           copies the shim out of the image, makes the dirs
//   initContainers[1]  gpuwise-advisor           native sidecar (restartPolicy: Always), or
//   containers[-]      gpuwise-advisor           a classic sidecar with --classic-sidecar
//   every GPU container                          LD_PRELOAD, CUDA_INJECTION64_PATH,
//                                                GPUWISE_ENDPOINT, GPUWISE_POD/NAMESPACE/NODE
//                                                (downward API), GPUWISE_CONTAINER (literal),
//                                                GPUWISE_JOB (downward API, when the pod names
//                                                its job: see kJobNameLabels)
//   the sidecar also gets GPUWISE_JOB, and GPUWISE_RANK: the first GPU container's literal RANK,
//   else the first of kPodIndexLabels (downward API); its reports are named by both
//   (advisor/cli/sidecar_report_name.h)
//
// Environment names are exactly those the shim reads (interposer/config.h); GPUWISE_NODE is set
// for the advisor and for operators, the shim does not read it yet.
#pragma once

#include <cstddef>
#include <string>

namespace gpuwise::advisor {

// Pod metadata the webhook reads and writes.
inline constexpr const char* kInjectAnnotation = "gpuwise.io/inject"; // "false": opt out
inline constexpr const char* kStatusAnnotation = "gpuwise.io/status"; // "injected" once done
inline constexpr const char* kReportVolumeAnnotation = "gpuwise.io/report-volume"; // pod volume
inline constexpr const char* kInjectedLabel = "gpuwise.io/injected"; // "true": PodMonitor
inline constexpr const char* kNamespaceLabel = "gpuwise.io/inject";  // "enabled" (selector)
inline constexpr const char* kJobAnnotation = "gpuwise.io/job"; // the job's name, over any label

// Where a pod's job name is, first present wins (after kJobAnnotation): the training operators'
// own labels (Kubeflow, JobSet), then the Job controller's, then the generic instance label.
inline constexpr const char* kJobNameLabels[] = {
    "training.kubeflow.org/job-name", "jobset.sigs.k8s.io/jobset-name",
    "batch.kubernetes.io/job-name", "app.kubernetes.io/instance"};
// The pod's index in its job, first present wins, for the sidecar's rank where no training
// container sets RANK literally: an Indexed Job's completion index, a Kubeflow replica index, a
// StatefulSet's pod index, a JobSet's job index (one pod per job in the usual JobSet layout).
inline constexpr const char* kPodIndexLabels[] = {
    "batch.kubernetes.io/job-completion-index", "training.kubeflow.org/replica-index",
    "apps.kubernetes.io/pod-index", "jobset.sigs.k8s.io/job-index"};

// Names inside the pod. The port name is at most 15 characters (IANA_SVC_NAME).
inline constexpr const char* kVolumeName = "gpuwise";
inline constexpr const char* kInstallContainer = "gpuwise-install";
inline constexpr const char* kAdvisorContainer = "gpuwise-advisor";
inline constexpr const char* kMetricsPortName = "gpuwise-metrics";
inline constexpr const char* kReportVolumeMountPath = "/gpuwise-reports";

// Paths inside the image (containers/Dockerfile installs them there).
inline constexpr const char* kImageGpuwise = "/opt/gpuwise/bin/gpuwise";
inline constexpr const char* kImageShimDir = "/opt/gpuwise/shim"; // libgpuwise.so + deps/

struct InjectionConfig {
  std::string image; // the gpuwise image: installer and sidecar
  std::string image_pull_policy = "IfNotPresent";
  bool classic_sidecar = false;        // advisor as a regular container (pre-1.29 clusters)
  int metrics_port = 9464;             // 0: no metrics port, no --metrics-addr
  std::string mount_path = "/gpuwise"; // where the shared volume is mounted
  std::string sidecar_cpu_request = "100m";
  std::string sidecar_memory_request = "256Mi";
  std::string sidecar_memory_limit = "2Gi";
  std::string version; // written into the gpuwise.io/version annotation

  std::string shimPath() const { return mount_path + "/libgpuwise.so"; }
  std::string socketDir() const { return mount_path + "/sock"; }
  std::string endpoint() const { return "ipc://" + socketDir() + "/advisor"; }
  std::string reportDir() const { return mount_path + "/reports"; }
};

// The webhook server's own limits.
struct WebhookLimits {
  size_t max_body_bytes = 3u << 20; // an AdmissionReview of the largest object etcd keeps (1.5 MiB)
                                    // twice over (object and oldObject), with room to spare
  int max_json_depth = 64;          // a pod is ~10 deep; deeper input is rejected before parsing
};

} // namespace gpuwise::advisor
