// The mutating admission webhook's logic as one pure function: the body of a POST /mutate in,
// the HTTP status and body to answer with out. No I/O, no globals; any thread; never throws.
// The TLS server (webhook_server.h) only moves bytes, so this is what tests and the fuzzer drive.
//
// Answers:
//   400, text/plain, one line       the body is not an admission.k8s.io/v1 AdmissionReview with a
//                                   request.uid: too large, nested too deep, malformed JSON, not
//                                   an object, another apiVersion or kind. Without a uid there is
//                                   nothing to answer; the API server then applies the webhook's
//                                   failurePolicy (Ignore: the pod is admitted unchanged).
//   200, AdmissionReview response   allowed: true always (gpuwise never blocks a pod), with
//                                   patchType JSONPatch and the base64 patch when injected; else
//                                   no patch and the reason in status.message and in the audit
//                                   annotation "injection". Notes become warnings.
// Requests that are not CREATE of a core/v1 Pod (another kind, a subresource, UPDATE, DELETE,
// CONNECT) are allowed unchanged with the reason.
#pragma once

#include "advisor/webhook/injection_config.h"

#include <string>
#include <string_view>

namespace gpuwise::advisor {

inline constexpr const char* kAdmissionApiVersion = "admission.k8s.io/v1";

struct AdmissionResult {
  int http_status = 200;
  std::string content_type = "application/json";
  std::string body;
  bool patched = false;
  std::string log_line; // one line for the server log: who, what, why
};

AdmissionResult reviewAdmission(std::string_view body, const InjectionConfig& config,
                                const WebhookLimits& limits);

// The deepest nesting of arrays and objects in `text` (strings skipped), counting no further
// than `stop_at`. Linear, no allocation: run before parsing so hostile input cannot recurse.
int jsonDepth(std::string_view text, int stop_at);

std::string base64Encode(std::string_view bytes);

} // namespace gpuwise::advisor
