// The admission webhook's logic without a server: JSON Pointer escaping, patch building, the
// injection decision and the AdmissionReview answers, on real AdmissionReview documents
// (tests/advisor/webhook_fixtures). Every patch is applied with a strict RFC 6902 implementation
// of the test's own and the resulting pod checked for consistency.
#include "advisor/webhook/admission_review.h"
#include "advisor/webhook/injected_containers.h"
#include "advisor/webhook/json_patch.h"
#include "advisor/webhook/pod_injector.h"
#include "tests/advisor/webhook_pod_check.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>

using namespace gpuwise::advisor;
using namespace gpuwise::advisor::test;

namespace {

std::string fixturePath(const std::string& name) {
  const char* src = std::getenv("GPUWISE_SOURCE_DIR");
  return std::string(src ? src : ".") + "/tests/advisor/webhook_fixtures/" + name;
}

json fixture(const std::string& name) {
  std::ifstream in(fixturePath(name));
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  return json::parse(ss.str());
}

InjectionConfig config() {
  InjectionConfig c;
  c.image = "registry.example/gpuwise:test";
  c.version = "0.1.0";
  return c;
}

struct Answer {
  int status = 0;
  json review; // the parsed body when 200
  json patch;  // decoded operations, empty when none
  std::string text;
};

Answer review(const json& doc, const InjectionConfig& c = config(), WebhookLimits limits = {}) {
  return [&] {
    Answer a;
    AdmissionResult r = reviewAdmission(doc.dump(), c, limits);
    a.status = r.http_status;
    a.text = r.body;
    if (r.http_status == 200) {
      a.review = json::parse(r.body);
      if (a.review["response"].contains("patch"))
        a.patch = json::parse(decodeBase64(a.review["response"]["patch"].get<std::string>()));
    }
    return a;
  }();
}

json injectedPod(const json& doc, const Answer& a) {
  return applyJsonPatch(doc["request"]["object"], a.patch);
}

void requireConsistent(const json& pod, const PodExpectations& x) {
  auto problems = podProblems(pod, x);
  for (const auto& p : problems)
    UNSCOPED_INFO(p);
  REQUIRE(problems.empty());
}

} // namespace

TEST_CASE("webhook: the patch's base64 is what a strict RFC 4648 decoder reads back") {
  CHECK(base64Encode("") == "");
  CHECK(base64Encode("f") == "Zg==");
  CHECK(base64Encode("fo") == "Zm8=");
  CHECK(base64Encode("foobar") == "Zm9vYmFy");
  std::string bytes;
  for (int n = 0; n < 70; ++n) {
    INFO(n << " bytes");
    CHECK(gpuwise::test::tryDecodeBase64(base64Encode(bytes)) == bytes);
    bytes.push_back(char(n * 37 + 255));
  }
  // The tests' decoder refuses what the API server would: no padding, padding inside, a wrong
  // alphabet, a length that is not a multiple of 4.
  for (const char* bad : {"Zg", "Zg=", "Z===", "Zg==Zg==", "Zm=v", "Zm9-", "Zm9v\n"})
    CHECK_FALSE(gpuwise::test::tryDecodeBase64(bad));
}

TEST_CASE("webhook: JSON Pointer tokens escape ~ then /") {
  CHECK(escapePointerToken("nvidia.com/gpu") == "nvidia.com~1gpu");
  CHECK(escapePointerToken("gpuwise.io/status") == "gpuwise.io~1status");
  CHECK(escapePointerToken("a~b/c") == "a~0b~1c");
  CHECK(escapePointerToken("~1") == "~01");
  json doc = {{"metadata", {{"annotations", {{"a/b~c", "v"}}}}}};
  REQUIRE(findPointer(doc, "/metadata/annotations/a~1b~0c") != nullptr);
  CHECK(*findPointer(doc, "/metadata/annotations/a~1b~0c") == "v");
  CHECK(findPointer(doc, "/metadata/labels") == nullptr);
}

TEST_CASE("webhook: patches create missing arrays and maps whole, extend existing ones") {
  json doc = {{"spec", {{"volumes", json::array({{{"name", "a"}}})}}},
              {"metadata", json::object()}};
  JsonPatch p;
  p.append(doc, "/spec/volumes", {{"name", "b"}});
  p.append(doc, "/spec/initContainers", {{"name", "x"}});
  p.insert(doc, "/spec/initContainers", 0, {{"name", "w"}});
  p.addMember(doc, "/metadata/annotations", "k/1", "v1");
  p.addMember(doc, "/metadata/annotations", "k/2", "v2");
  REQUIRE(p.size() == 3);
  CHECK(p.ops()[0] ==
        json({{"op", "add"}, {"path", "/spec/volumes/-"}, {"value", {{"name", "b"}}}}));
  CHECK(p.ops()[1]["path"] == "/spec/initContainers");
  CHECK(p.ops()[1]["value"] == json::array({{{"name", "w"}}, {{"name", "x"}}}));
  CHECK(p.ops()[2]["value"] == json({{"k/1", "v1"}, {"k/2", "v2"}}));
  json out = applyJsonPatch(doc, p.ops());
  CHECK(out["spec"]["volumes"].size() == 2);
  CHECK(out["metadata"]["annotations"]["k/2"] == "v2");

  // The strict applier refuses what the API server refuses.
  CHECK_THROWS(applyJsonPatch(
      doc, json::parse(R"([{"op":"add","path":"/metadata/labels/x","value":"1"}])")));
  CHECK_THROWS(
      applyJsonPatch(doc, json::parse(R"([{"op":"add","path":"/spec/volumes/5","value":{}}])")));
  CHECK_THROWS(
      applyJsonPatch(doc, json::parse(R"([{"op":"replace","path":"/spec/x","value":1}])")));
}

TEST_CASE("webhook: which containers request a GPU") {
  auto with = [](json limits, json requests = json::object()) {
    return json{{"name", "c"}, {"resources", {{"limits", limits}, {"requests", requests}}}};
  };
  CHECK(requestsGpu(with({{"nvidia.com/gpu", "1"}})));
  CHECK(requestsGpu(with({{"nvidia.com/gpu", 8}})));
  CHECK(requestsGpu(with({{"nvidia.com/mig-1g.10gb", 1}})));
  CHECK(requestsGpu(with({{"nvidia.com/mig-3g.40gb", "2"}})));
  CHECK(requestsGpu(with({{"nvidia.com/gpu.shared", "1"}})));
  CHECK(requestsGpu(with(json::object(), {{"nvidia.com/gpu", "1"}})));
  CHECK_FALSE(requestsGpu(with({{"nvidia.com/gpu", "0"}})));
  CHECK_FALSE(requestsGpu(with({{"nvidia.com/gpu", 0}})));
  CHECK_FALSE(requestsGpu(with({{"cpu", "4"}, {"memory", "8Gi"}})));
  CHECK_FALSE(requestsGpu(with({{"amd.com/gpu", "1"}})));
  CHECK_FALSE(requestsGpu(with({{"nvidia.com/gpumem", "1"}})));
  CHECK_FALSE(requestsGpu(json{{"name", "c"}}));
  CHECK_FALSE(requestsGpu(json{{"name", "c"}, {"resources", "oops"}}));
}

TEST_CASE("webhook: a PyTorchJob worker gets the shim, the advisor and a consistent pod") {
  json doc = fixture("pytorchjob_worker.json");
  Answer a = review(doc);
  REQUIRE(a.status == 200);
  const json& r = a.review["response"];
  CHECK(a.review["apiVersion"] == "admission.k8s.io/v1");
  CHECK(a.review["kind"] == "AdmissionReview");
  CHECK(r["uid"] == doc["request"]["uid"]);
  CHECK(r["allowed"] == true);
  CHECK(r["patchType"] == "JSONPatch");
  CHECK(r["auditAnnotations"]["injection"] == "injected into pytorch (native sidecar)");

  json pod = injectedPod(doc, a);
  requireConsistent(pod, {true, true, {"pytorch"}});
  // Existing arrays were extended, not replaced: the operator's init container runs after ours.
  const json& init = pod["spec"]["initContainers"];
  REQUIRE(init.size() == 3);
  CHECK(init[2]["name"] == "init-pytorch");
  CHECK(pod["spec"]["volumes"].size() == 4);
  const json& c = pod["spec"]["containers"][0];
  CHECK(envVar(c, "LD_PRELOAD")->at("value") ==
        "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2:/gpuwise/libgpuwise.so");
  CHECK(envVar(c, "RANK")->at("value") == "1"); // the user's variables are untouched
  CHECK(c["env"].size() == 10 + 7);             // GPUWISE_JOB from the Kubeflow job label too
  CHECK(c["volumeMounts"].size() == 4);
  CHECK(pod["metadata"]["labels"]["gpuwise.io/injected"] == "true");
  CHECK(pod["metadata"]["labels"]["training.kubeflow.org/replica-type"] == "worker");
  CHECK(pod["metadata"]["annotations"]["sidecar.istio.io/inject"] == "false");

  const json& advisor = init[1];
  CHECK(advisor["image"] == "registry.example/gpuwise:test");
  CHECK(advisor["ports"][0] ==
        json({{"name", "gpuwise-metrics"}, {"containerPort", 9464}, {"protocol", "TCP"}}));
  CHECK(advisor["args"] == json::array({"--listen", "ipc:///gpuwise/sock/advisor", "--report-dir",
                                        "/gpuwise/reports", "--metrics-addr", "0.0.0.0:9464"}));
  CHECK(advisor["resources"]["requests"]["cpu"] == "100m");
  CHECK(init[0]["command"][2].get<std::string>().find("cp -R /opt/gpuwise/shim/. /gpuwise/") !=
        std::string::npos);
}

TEST_CASE("webhook: a MIG pod without arrays gets them created") {
  json doc = fixture("mig_pod.json");
  Answer a = review(doc);
  REQUIRE(a.status == 200);
  REQUIRE(a.patch.is_array());
  std::set<std::string> paths;
  for (const auto& op : a.patch)
    paths.insert(op["path"].get<std::string>());
  // Created whole: none of these existed in the pod.
  for (const char* p : {"/metadata/annotations", "/spec/volumes", "/spec/initContainers",
                        "/spec/containers/0/env", "/spec/containers/0/volumeMounts"})
    CHECK(paths.count(p) == 1);
  json pod = injectedPod(doc, a);
  requireConsistent(pod, {true, true, {"server"}});
  CHECK(pod["metadata"]["labels"]["app"] == "bert-serve");
  CHECK(pod["spec"]["initContainers"].size() == 2);
}

TEST_CASE("webhook: pods that must not change get allowed: true with no patch and a reason") {
  struct Case {
    const char* file;
    const char* reason;
  };
  for (auto [file, reason] :
       {Case{"cpu_pod.json", "no container requests nvidia.com/gpu or nvidia.com/mig-*"},
        Case{"opted_out.json", "opted out (annotation gpuwise.io/inject)"},
        Case{"already_injected.json", "already injected"},
        Case{"deployment.json", "not a Pod (apps/Deployment)"}}) {
    INFO(file);
    json doc = fixture(file);
    Answer a = review(doc);
    REQUIRE(a.status == 200);
    const json& r = a.review["response"];
    CHECK(r["uid"] == doc["request"]["uid"]);
    CHECK(r["allowed"] == true);
    CHECK_FALSE(r.contains("patch"));
    CHECK_FALSE(r.contains("patchType"));
    CHECK(r["status"]["message"] == reason);
    CHECK(r["auditAnnotations"]["injection"] == reason);
  }
}

TEST_CASE("webhook: injecting twice changes nothing (reinvocation, replays)") {
  for (const char* file : {"pytorchjob_worker.json", "mig_pod.json"}) {
    INFO(file);
    json doc = fixture(file);
    Answer first = review(doc);
    REQUIRE(!first.patch.empty());
    json again = doc;
    again["request"]["object"] = injectedPod(doc, first);
    Answer second = review(again);
    REQUIRE(second.status == 200);
    CHECK(second.patch.is_null());
    CHECK(second.review["response"]["status"]["message"] == "already injected");
  }
  CHECK(mergeLdPreload("/a.so:/gpuwise/libgpuwise.so", "/gpuwise/libgpuwise.so") ==
        "/a.so:/gpuwise/libgpuwise.so");
  CHECK(mergeLdPreload("/a.so /b.so", "/s.so") == "/a.so /b.so:/s.so");
  CHECK(mergeLdPreload("", "/s.so") == "/s.so");
  CHECK(mergeLdPreload("/a.so:", "/s.so") == "/a.so:/s.so");
}

TEST_CASE("webhook: the classic sidecar and the metrics port follow the configuration") {
  json doc = fixture("pytorchjob_worker.json");
  InjectionConfig c = config();
  c.classic_sidecar = true;
  c.metrics_port = 0;
  Answer a = review(doc, c);
  json pod = injectedPod(doc, a);
  requireConsistent(pod, {true, false, {"pytorch"}});
  const json& advisor = pod["spec"]["containers"].back();
  CHECK(advisor["name"] == "gpuwise-advisor");
  CHECK_FALSE(advisor.contains("ports"));
  CHECK(advisor["args"].size() == 4);
  CHECK(pod["spec"]["initContainers"].size() == 2);
  CHECK(a.review["response"]["auditAnnotations"]["injection"] ==
        "injected into pytorch (classic sidecar)");
}

TEST_CASE("webhook: several GPU containers, a CPU helper, and what users already set") {
  json doc = fixture("pytorchjob_worker.json");
  json& spec = doc["request"]["object"]["spec"];
  json second = spec["containers"][0];
  second["name"] = "evaluator";
  second.erase("ports");
  second["env"] =
      json::array({{{"name", "GPUWISE_ENDPOINT"}, {"value", "tcp://10.0.0.1:5555"}},
                   {{"name", "LD_PRELOAD"},
                    {"valueFrom", {{"configMapKeyRef", {{"name", "p"}, {"key", "k"}}}}}}});
  second["resources"] = {{"limits", {{"nvidia.com/mig-2g.20gb", "1"}}}};
  json helper = {{"name", "log-shipper"},
                 {"image", "fluent/fluent-bit:3.0"},
                 {"resources", {{"limits", {{"cpu", "100m"}}}}}};
  spec["containers"].push_back(second);
  spec["containers"].push_back(helper);

  Answer a = review(doc);
  json pod = injectedPod(doc, a);
  requireConsistent(pod, {true, true, {"pytorch"}});
  const json& eval = pod["spec"]["containers"][1];
  CHECK(envVar(eval, "GPUWISE_ENDPOINT")->at("value") == "tcp://10.0.0.1:5555"); // kept
  CHECK(envVar(eval, "LD_PRELOAD")->contains("valueFrom"));                      // kept
  CHECK(envVar(eval, "CUDA_INJECTION64_PATH")->at("value") == "/gpuwise/libgpuwise.so");
  CHECK(envVar(eval, "GPUWISE_CONTAINER")->at("value") == "evaluator");
  CHECK(pod["spec"]["containers"][2] == helper); // the CPU container is untouched
  const json& warnings = a.review["response"]["warnings"];
  REQUIRE(warnings.size() == 2);
  CHECK(warnings[0].get<std::string>().rfind(
            "container evaluator sets LD_PRELOAD through valueFrom", 0) == 0);
  CHECK(warnings[1] == "container evaluator sets GPUWISE_ENDPOINT: kept");
  CHECK(a.review["response"]["auditAnnotations"]["injection"] ==
        "injected into pytorch,evaluator (native sidecar)");
}

TEST_CASE("webhook: taken names, host network and the report volume") {
  json base = fixture("pytorchjob_worker.json");
  SECTION("a volume named gpuwise: not injected") {
    base["request"]["object"]["spec"]["volumes"].push_back(
        {{"name", "gpuwise"}, {"emptyDir", json::object()}});
    Answer a = review(base);
    CHECK(a.patch.is_null());
    CHECK(a.review["response"]["status"]["message"] ==
          "not injected: a volume named gpuwise exists");
  }
  SECTION("a GPU container already mounting /gpuwise: not injected") {
    base["request"]["object"]["spec"]["containers"][0]["volumeMounts"].push_back(
        {{"name", "dshm"}, {"mountPath", "/gpuwise"}});
    Answer a = review(base);
    CHECK(a.patch.is_null());
    CHECK(a.review["response"]["status"]["message"] ==
          "not injected: container pytorch already mounts /gpuwise");
  }
  SECTION("host network: injected without a metrics port") {
    base["request"]["object"]["spec"]["hostNetwork"] = true;
    Answer a = review(base);
    json pod = injectedPod(base, a);
    requireConsistent(pod, {true, true, {"pytorch"}});
    CHECK_FALSE(pod["spec"]["initContainers"][1].contains("ports"));
    CHECK(a.review["response"]["warnings"].size() == 1);
  }
  SECTION("the metrics port taken by the training container: no metrics port") {
    base["request"]["object"]["spec"]["containers"][0]["ports"][0]["containerPort"] = 9464;
    Answer a = review(base);
    json pod = injectedPod(base, a);
    requireConsistent(pod, {true, true, {"pytorch"}});
    CHECK_FALSE(pod["spec"]["initContainers"][1].contains("ports"));
  }
  SECTION("gpuwise.io/report-volume names a pod volume: the advisor writes there") {
    base["request"]["object"]["metadata"]["annotations"]["gpuwise.io/report-volume"] = "datasets";
    Answer a = review(base);
    json pod = injectedPod(base, a);
    requireConsistent(pod, {true, true, {"pytorch"}});
    const json& advisor = pod["spec"]["initContainers"][1];
    CHECK(advisor["args"][3] == "/gpuwise-reports");
    CHECK(advisor["volumeMounts"][1] ==
          json({{"name", "datasets"}, {"mountPath", "/gpuwise-reports"}}));
  }
  SECTION("a Windows pod: not injected") {
    base["request"]["object"]["spec"]["os"] = {{"name", "windows"}};
    CHECK(review(base).patch.is_null());
  }
}

TEST_CASE("webhook: requests that are not an AdmissionReview get 400 with a reason") {
  json good = fixture("mig_pod.json");
  auto status = [](const std::string& body, WebhookLimits limits = {}) {
    AdmissionResult r = reviewAdmission(body, config(), limits);
    INFO(r.body);
    CHECK(r.body.rfind("gpuwise webhook: ", 0) == 0);
    CHECK(r.content_type == "text/plain");
    return r.http_status;
  };
  CHECK(status("") == 400);
  CHECK(status("{\"apiVersion\": ") == 400);
  CHECK(status("[1,2,3]") == 400);
  CHECK(status("\"AdmissionReview\"") == 400);
  json v1beta1 = good;
  v1beta1["apiVersion"] = "admission.k8s.io/v1beta1";
  CHECK(status(v1beta1.dump()) == 400);
  json wrong_kind = good;
  wrong_kind["kind"] = "TokenReview";
  CHECK(status(wrong_kind.dump()) == 400);
  json no_uid = good;
  no_uid["request"].erase("uid");
  CHECK(status(no_uid.dump()) == 400);
  json no_request = good;
  no_request.erase("request");
  CHECK(status(no_request.dump()) == 400);
  WebhookLimits small;
  small.max_body_bytes = 1000;
  CHECK(status(good.dump(), small) == 400);
  CHECK(status(std::string(100000, '[') + std::string(100000, ']')) == 400);
  CHECK(jsonDepth(R"({"a":"[[[[","b":[{"c":[]}]})", 100) == 4);
  CHECK(jsonDepth(R"("\"[[")", 100) == 0);
}

// A JSON escape puts a newline or a terminal escape into any string of the request; what the
// server logs and the 400 body must still be one line each (the fuzzer found a namespace with a
// newline forging a second log entry).
TEST_CASE("webhook: control characters from the request never split the log line or a 400 body") {
  json doc = fixture("mig_pod.json");
  doc["request"]["namespace"] = "infer\nence";
  doc["request"]["uid"] = "uid\r\nrejected request: forged";
  doc["request"]["object"]["metadata"]["name"] = "pod\x1b[31m";
  doc["request"]["object"]["spec"]["containers"][0]["name"] = "srv\ner";
  AdmissionResult r = reviewAdmission(doc.dump(), config(), {});
  REQUIRE(r.http_status == 200);
  INFO(r.log_line);
  CHECK(r.log_line.find_first_of("\r\n\x1b") == std::string::npos);
  CHECK(r.log_line.rfind("infer\\x0aence/pod\\x1b[31m (uid\\x0d\\x0arejected request: forged): ",
                         0) == 0);
  // The answer itself keeps the uid exactly: the API server matches it byte for byte.
  CHECK(json::parse(r.body)["response"]["uid"] == "uid\r\nrejected request: forged");

  json wrong = doc;
  wrong["apiVersion"] = "v1\ngpuwise webhook: forged";
  AdmissionResult bad = reviewAdmission(wrong.dump(), config(), {});
  REQUIRE(bad.http_status == 400);
  CHECK(bad.body.find('\n') == bad.body.size() - 1);
  CHECK(bad.log_line.find('\n') == std::string::npos);
  CHECK(bad.body.find("'v1\\x0agpuwise webhook: forged'") != std::string::npos);
}

TEST_CASE("webhook: other operations, subresources and pods it cannot read are let through") {
  json doc = fixture("mig_pod.json");
  auto message = [&](const json& d) {
    Answer a = review(d);
    REQUIRE(a.status == 200);
    CHECK(a.review["response"]["allowed"] == true);
    CHECK(a.patch.is_null());
    return a.review["response"]["status"]["message"].get<std::string>();
  };
  json update = doc;
  update["request"]["operation"] = "UPDATE";
  CHECK(message(update) == "operation UPDATE, only CREATE is injected");
  json sub = doc;
  sub["request"]["subResource"] = "ephemeralcontainers";
  CHECK(message(sub) == "a request for the pods/ephemeralcontainers subresource");
  json no_object = doc;
  no_object["request"]["object"] = nullptr;
  CHECK(message(no_object) == "the request has no pod object");
  json bad_containers = doc;
  bad_containers["request"]["object"]["spec"]["containers"] = "pytorch";
  CHECK(message(bad_containers) == "not a readable pod: spec.containers is not a list");
  json bad_env = doc;
  bad_env["request"]["object"]["spec"]["containers"][0]["env"] = {{"LD_PRELOAD", "x"}};
  CHECK(message(bad_env).rfind("not a readable pod: container server.env is not a list", 0) == 0);
}

// Every node of a real pod replaced by every other JSON type: the answer is always a 200 with
// allowed: true, and whenever there is a patch it applies strictly to what was sent. This is the
// property the fuzzer will hammer; here it runs over every position once.
TEST_CASE("webhook: type confusion anywhere in a pod never breaks the answer or the patch") {
  json doc = fixture("pytorchjob_worker.json");
  json flat = doc["request"]["object"].flatten();
  std::vector<std::string> pointers;
  for (auto it = flat.begin(); it != flat.end(); ++it) {
    // Every ancestor of every leaf as well as the leaf.
    std::string p = it.key();
    while (!p.empty()) {
      pointers.push_back(p);
      p = p.substr(0, p.rfind('/'));
    }
  }
  std::sort(pointers.begin(), pointers.end());
  pointers.erase(std::unique(pointers.begin(), pointers.end()), pointers.end());
  const json replacements[] = {nullptr, 0, 7.5, "x", json::array(), json::object(), true};
  size_t patched = 0, total = 0;
  for (const auto& p : pointers) {
    for (const auto& r : replacements) {
      json mutated = doc;
      mutated["request"]["object"][json::json_pointer(p)] = r;
      Answer a = review(mutated);
      ++total;
      INFO(p << " = " << r.dump());
      REQUIRE(a.status == 200);
      REQUIRE(a.review["response"]["allowed"] == true);
      if (a.patch.is_null()) continue;
      ++patched;
      json pod;
      REQUIRE_NOTHROW(pod = applyJsonPatch(mutated["request"]["object"], a.patch));
    }
  }
  CHECK(total > 1000);
  CHECK(patched > total / 2); // most single changes leave a GPU pod injectable
}

TEST_CASE("webhook: a pod with 2,000 GPU containers is reviewed in linear time") {
  json doc = fixture("pytorchjob_worker.json");
  json& containers = doc["request"]["object"]["spec"]["containers"];
  json first = containers[0];
  first.erase("ports");
  containers = json::array();
  for (int i = 0; i < 2000; ++i) {
    json c = first;
    c["name"] = "worker-" + std::to_string(i);
    containers.push_back(std::move(c));
  }
  std::string body = doc.dump();
  REQUIRE(body.size() < WebhookLimits{}.max_body_bytes); // a review the server accepts

  auto started = std::chrono::steady_clock::now();
  AdmissionResult r = reviewAdmission(body, config(), WebhookLimits{});
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  WARN("2,000-container review (" << body.size() << " bytes): " << seconds << " s");
  // Building the patch was quadratic in containers: 84 s for this pod in the server. Linear, it
  // is parsing and printing JSON: ~2 s here, where this file's -O0 copies of nlohmann's templates
  // may serve the library too; the bound leaves room for a loaded machine.
  CHECK(seconds < 10.0);
  REQUIRE(r.http_status == 200);
  json answer = json::parse(r.body);
  json patch = json::parse(decodeBase64(answer["response"]["patch"].get<std::string>()));
  size_t mounts = 0;
  for (const auto& op : patch)
    if (op["path"].get<std::string>().find("/volumeMounts") != std::string::npos) ++mounts;
  CHECK(mounts == 2000);
  CHECK(patch.back()["path"] != patch.front()["path"]);
}

namespace {

// What the kubelet puts in a variable whose value comes from `metadata.labels['k']` or
// `metadata.annotations['k']` (the two downward-API paths the job variables use).
std::string downwardValue(const json& pod, const json& var) {
  const std::string path = var["valueFrom"]["fieldRef"]["fieldPath"].get<std::string>();
  const size_t open = path.find("['"), close = path.rfind("']");
  REQUIRE((open != std::string::npos && close == path.size() - 2));
  const std::string map = path.substr(0, open), key = path.substr(open + 2, close - open - 2);
  REQUIRE((map == "metadata.labels" || map == "metadata.annotations"));
  return pod["metadata"][map.substr(9)].value(key, "");
}

} // namespace

TEST_CASE("webhook: the sidecar and the training containers learn the job's name and the rank") {
  struct Case {
    const char* file;
    const char* job_field; // GPUWISE_JOB's downward-API path; "" none
    const char* job;       // what it resolves to
    const char* rank;      // the sidecar's GPUWISE_RANK, resolved; "" none
    bool rank_literal;     // a literal value (the training container's RANK), not a fieldRef
  };
  for (const Case& x :
       {Case{"pytorchjob_worker.json", "metadata.labels['training.kubeflow.org/job-name']",
             "resnet50-ddp", "1", true},
        Case{"jobset_pod.json", "metadata.labels['jobset.sigs.k8s.io/jobset-name']", "llama-sft",
             "1", false},
        Case{"indexed_job_pod.json", "metadata.labels['batch.kubernetes.io/job-name']",
             "bert-pretrain", "3", false},
        Case{"annotated_job_pod.json", "metadata.annotations['gpuwise.io/job']", "nightly-finetune",
             "0", false},
        Case{"mig_pod.json", "", "", "", false}}) {
    INFO(x.file);
    json doc = fixture(x.file);
    Answer a = review(doc);
    REQUIRE(a.status == 200);
    json pod = injectedPod(doc, a);
    const json& c = pod["spec"]["containers"][0];
    requireConsistent(pod, {true, true, {c["name"].get<std::string>()}});
    const json& sidecar = pod["spec"]["initContainers"][1];
    REQUIRE(sidecar["name"] == "gpuwise-advisor");
    for (const json* container : {&c, &sidecar}) {
      const json* job = envVar(*container, "GPUWISE_JOB");
      if (*x.job_field == '\0') {
        CHECK(job == nullptr);
        continue;
      }
      REQUIRE(job != nullptr);
      CHECK(job->at("valueFrom")["fieldRef"]["fieldPath"] == x.job_field);
      CHECK(downwardValue(pod, *job) == x.job);
    }
    CHECK(envVar(c, "GPUWISE_RANK") == nullptr); // the processes have their own RANK
    const json* rank = envVar(sidecar, "GPUWISE_RANK");
    if (*x.rank == '\0') {
      CHECK(rank == nullptr);
      continue;
    }
    REQUIRE(rank != nullptr);
    CHECK(rank->contains("value") == x.rank_literal);
    CHECK((x.rank_literal ? rank->at("value").get<std::string>() : downwardValue(pod, *rank)) ==
          x.rank);
  }
}
