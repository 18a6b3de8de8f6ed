// libFuzzer target: the admission webhook's logic (advisor/webhook/admission_review.h) on arbitrary
// request bodies, the bytes the API server (or anyone who reaches the port) POSTs to /mutate.
//
// Input: the body, unchanged, so corpus/admission_review/ holds readable AdmissionReview JSON
// (seeded from the webhook tests' fixtures, tests/advisor/webhook_fixtures/). The input's length
// picks the sidecar style (classic or native) and whether a metrics port is configured, the two
// settings that change the patch's shape.
//
// Oracles beyond "no crash, no sanitizer finding", from the function's contract:
//   - the status is 200 or 400; a 400 is text/plain, one line;
//   - a 200 is an AdmissionReview v1 response that always allows the pod, echoes request.uid, and
//     when it patches, carries patchType JSONPatch and a base64 JSON Patch that APPLIES to
//     request.object (a patch the API server cannot apply fails the pod's creation);
//   - the log line is one line; jsonDepth never reports more than it was asked to count to.
#include "advisor/webhook/admission_review.h"
#include "tests/base64.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

namespace {

using nlohmann::json;

[[noreturn]] void fail(const char* what, std::string_view detail) {
  std::fprintf(stderr, "fuzz_admission_review: oracle failed: %s: %.*s\n", what, int(detail.size()),
               detail.data());
  std::abort();
}

const gpuwise::advisor::InjectionConfig& config(bool classic, bool metrics) {
  static const auto make = [](bool classic, bool metrics) {
    gpuwise::advisor::InjectionConfig c;
    c.image = "registry.example/gpuwise:fuzz";
    c.version = "0.1.0";
    c.classic_sidecar = classic;
    c.metrics_port = metrics ? 9464 : 0;
    return c;
  };
  static const gpuwise::advisor::InjectionConfig configs[4] = {
      make(false, false), make(false, true), make(true, false), make(true, true)};
  return configs[(classic ? 2 : 0) + (metrics ? 1 : 0)];
}

void checkAccepted(std::string_view body, const gpuwise::advisor::AdmissionResult& r) {
  const json review = json::parse(r.body, nullptr, /*allow_exceptions=*/false);
  if (review.is_discarded() || !review.is_object()) fail("a 200 body is not a JSON object", r.body);
  if (review.value("apiVersion", "") != gpuwise::advisor::kAdmissionApiVersion ||
      review.value("kind", "") != "AdmissionReview")
    fail("a 200 body is not an AdmissionReview v1", r.body);
  const auto response = review.find("response");
  if (response == review.end() || !response->is_object()) fail("no response object", r.body);
  if (!response->contains("allowed") || (*response)["allowed"] != true)
    fail("a pod was not allowed", r.body);

  // The request was accepted, so it parses; its uid is what the response must echo.
  const json request = json::parse(body, nullptr, false);
  if (request.is_discarded()) fail("a 200 answered a body that is not JSON", r.body);
  const json& req = request.at("request");
  if (!response->contains("uid") || (*response)["uid"] != req.at("uid"))
    fail("response.uid is not request.uid", r.body);

  const bool has_patch = response->contains("patch");
  if (has_patch != r.patched) fail("patched flag and body disagree", r.body);
  if (!has_patch) return;
  if (response->value("patchType", "") != "JSONPatch")
    fail("a patch without patchType JSONPatch", r.body);
  const auto& encoded = (*response)["patch"];
  if (!encoded.is_string()) fail("the patch is not a base64 string", r.body);
  const auto text = gpuwise::test::tryDecodeBase64(encoded.get<std::string>());
  if (!text) fail("the patch is not valid base64", r.body);
  const json patch = json::parse(*text, nullptr, false);
  if (patch.is_discarded() || !patch.is_array()) fail("the patch is not a JSON array", *text);
  if (!req.contains("object")) fail("a patch for a request without an object", r.body);
  try {
    (void)req.at("object").patch(patch);
  } catch (const json::exception& e) {
    std::fprintf(stderr, "patch: %s\nerror: %s\n", text->c_str(), e.what());
    fail("the JSON Patch does not apply to request.object", e.what());
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  const auto& cfg = config(size % 2, (size / 2) % 2);
  gpuwise::advisor::WebhookLimits limits;
  limits.max_body_bytes = 1u << 20;

  const int depth = gpuwise::advisor::jsonDepth(body, 16);
  if (depth < 0 || depth > 16) fail("jsonDepth counted past its stop", body);

  const auto r = gpuwise::advisor::reviewAdmission(body, cfg, limits);
  if (r.log_line.find('\n') != std::string::npos)
    fail("the log line is more than one line", r.log_line);
  if (r.http_status == 400) {
    if (r.content_type.rfind("text/plain", 0) != 0) fail("a 400 is not text/plain", r.content_type);
    const std::string_view text = r.body;
    const std::string_view line =
        text.substr(0, text.size() && text.back() == '\n' ? text.size() - 1 : text.size());
    if (line.empty() || line.find('\n') != std::string_view::npos)
      fail("a 400 body is not one line", r.body);
    if (r.patched) fail("a 400 claims a patch", r.body);
  } else if (r.http_status == 200) {
    try {
      checkAccepted(body, r);
    } catch (const json::exception& e) {
      fail("a 200 answered a request without request.uid", e.what());
    }
  } else {
    fail("status is neither 200 nor 400", std::to_string(r.http_status));
  }
  return 0;
}
