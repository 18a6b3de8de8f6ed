#include "advisor/webhook/admission_review.h"

#include "advisor/webhook/pod_injector.h"
#include "profiler/model/printable_text.h"

#include <nlohmann/json.hpp>

namespace gpuwise::advisor {

using json = nlohmann::json;

namespace {

// Every string the answer's text and log line carry may come from the request (a namespace, a
// container name, an apiVersion), where a JSON escape puts a newline or a terminal escape in it:
// printableText keeps the 400 body and the log line one line each, so a request cannot forge a
// second log entry.
AdmissionResult badRequest(const std::string& reason) {
  const std::string why = model::printableText(reason);
  AdmissionResult r;
  r.http_status = 400;
  r.content_type = "text/plain";
  r.body = "gpuwise webhook: " + why + "\n";
  r.log_line = "rejected request: " + why;
  return r;
}

std::string str(const json& object, const char* key) {
  if (!object.is_object()) return {};
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

const json& obj(const json& object, const char* key) {
  static const json kNull;
  if (!object.is_object()) return kNull;
  auto it = object.find(key);
  return it == object.end() ? kNull : *it;
}

// "namespace/name" for the log; pods from controllers have only generateName at admission.
std::string podLabel(const json& request) {
  const json& meta = obj(obj(request, "object"), "metadata");
  std::string name = str(meta, "name");
  if (name.empty() && !str(meta, "generateName").empty()) name = str(meta, "generateName") + "*";
  if (name.empty()) name = str(request, "name");
  std::string ns = str(request, "namespace");
  return (ns.empty() ? std::string("?") : ns) + "/" + (name.empty() ? "?" : name);
}

AdmissionResult answer(const std::string& uid, const std::string& who, const InjectionPlan& plan) {
  json response = {{"uid", uid}, {"allowed", true}};
  if (plan.inject) {
    response["patchType"] = "JSONPatch";
    response["patch"] =
        base64Encode(plan.patch.dump(-1, ' ', false, json::error_handler_t::replace));
  } else {
    response["status"] = {{"code", 200}, {"message", plan.reason}};
  }
  response["auditAnnotations"] = {{"injection", plan.reason}};
  if (!plan.notes.empty()) response["warnings"] = plan.notes;
  json review = {{"apiVersion", kAdmissionApiVersion},
                 {"kind", "AdmissionReview"},
                 {"response", std::move(response)}};
  AdmissionResult r;
  r.body = review.dump(-1, ' ', false, json::error_handler_t::replace);
  r.patched = plan.inject;
  std::string line = who + " (" + uid + "): " + plan.reason;
  for (const auto& n : plan.notes)
    line += "; " + n;
  r.log_line = model::printableText(line);
  return r;
}

InjectionPlan skip(std::string reason) {
  InjectionPlan p;
  p.reason = std::move(reason);
  return p;
}

} // namespace

int jsonDepth(std::string_view text, int stop_at) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"')
      in_string = true;
    else if (c == '{' || c == '[') {
      if (++depth > deepest) deepest = depth;
      if (deepest >= stop_at) return deepest;
    } else if ((c == '}' || c == ']') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

std::string base64Encode(std::string_view in) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t v =
        (uint32_t(uint8_t(in[i])) << 16) | (uint32_t(uint8_t(in[i + 1])) << 8) | uint8_t(in[i + 2]);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  if (i < in.size()) {
    uint32_t v = uint32_t(uint8_t(in[i])) << 16;
    if (i + 1 < in.size()) v |= uint32_t(uint8_t(in[i + 1])) << 8;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += i + 1 < in.size() ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

AdmissionResult reviewAdmission(std::string_view body, const InjectionConfig& config,
                                const WebhookLimits& limits) {
  if (body.size() > limits.max_body_bytes)
    return badRequest("the body has " + std::to_string(body.size()) + " bytes, more than the " +
                      std::to_string(limits.max_body_bytes) + " allowed");
  if (jsonDepth(body, limits.max_json_depth + 1) > limits.max_json_depth)
    return badRequest("the body is nested deeper than " + std::to_string(limits.max_json_depth) +
                      " levels");
  json review = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (review.is_discarded()) return badRequest("the body is not valid JSON");
  if (!review.is_object()) return badRequest("the body is not a JSON object");
  std::string api_version = str(review, "apiVersion");
  if (api_version != kAdmissionApiVersion)
    return badRequest("apiVersion is '" + api_version + "', this webhook speaks " +
                      kAdmissionApiVersion + " (set admissionReviewVersions: [v1])");
  if (str(review, "kind") != "AdmissionReview")
    return badRequest("kind is '" + str(review, "kind") + "', not AdmissionReview");
  const json& request = obj(review, "request");
  if (!request.is_object()) return badRequest("the AdmissionReview has no request");
  std::string uid = str(request, "uid");
  if (uid.empty()) return badRequest("the AdmissionReview request has no uid");

  // From here on there is a uid to answer: every outcome is allowed: true.
  const std::string who = podLabel(request);
  try {
    const json& kind = obj(request, "kind");
    if (str(kind, "group") != "" || str(kind, "kind") != "Pod") {
      std::string k = str(kind, "group").empty() ? str(kind, "kind")
                                                 : str(kind, "group") + "/" + str(kind, "kind");
      return answer(uid, who, skip("not a Pod (" + (k.empty() ? std::string("no kind") : k) + ")"));
    }
    if (std::string sub = str(request, "subResource"); !sub.empty())
      return answer(uid, who, skip("a request for the pods/" + sub + " subresource"));
    if (std::string op = str(request, "operation"); op != "CREATE")
      return answer(
          uid, who,
          skip("operation " + (op.empty() ? std::string("?") : op) + ", only CREATE is injected"));
    const json& pod = obj(request, "object");
    if (!pod.is_object()) return answer(uid, who, skip("the request has no pod object"));
    return answer(uid, who, planInjection(pod, config));
  } catch (const std::exception& e) {
    // Not reachable by construction (every access above is checked); if it is, the pod still
    // goes through unchanged and the log says why.
    return answer(uid, who, skip(std::string("internal error: ") + e.what()));
  }
}

} // namespace gpuwise::advisor
