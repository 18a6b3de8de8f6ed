// containers/kubernetes rendered with `kubectl kustomize` and checked as the API server, the
// kubelet and the webhook will meet them: the Service reaches the webhook's port, the certificate
// names the Service, the MutatingWebhookConfiguration is safe (Ignore, None, short timeout,
// namespace selector), and the example workloads, sent through the webhook's own logic, become
// consistent pods that the PodMonitor scrapes. Also: the cert script's output verifies, and the
// Dockerfile is linted (no Docker engine here to build it).
#include "advisor/webhook/admission_review.h"
#include "advisor/webhook/injection_config.h"
#include "tests/advisor/webhook_pod_check.h"
#include "tests/containers/containers_support.h"
#include "tests/skip_test.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <sstream>

using namespace gpuwise::containers::test;
namespace fs = std::filesystem;
using gpuwise::advisor::test::applyJsonPatch;
using gpuwise::advisor::test::podProblems;
using gpuwise::test::decodeBase64;

namespace {

// The cases that need a tool carry its hidden tag and run as their own CTest entries
// (containers_manifests_kubectl_test ...): skipped where the tool is missing.
void requireKustomize(const TempDir& scratch) {
  if (which("kubectl").empty() || !haveYaml(scratch))
    gpuwise::test::skipTest(
        "kubectl or python3-yaml is not installed (Debian: scripts/install-deps "
        "kubernetes-client python3-yaml)");
}

void requireTool(const char* tool) {
  if (which(tool).empty()) gpuwise::test::skipTest(std::string(tool) + " is not installed");
}

std::string kubernetesDir() {
  return repoPath("containers/kubernetes");
}

const json& container(const json& deployment, const std::string& name) {
  for (const auto& c : deployment["spec"]["template"]["spec"]["containers"])
    if (c["name"] == name) return c;
  throw std::runtime_error("no container " + name);
}

void checkBase(const json& docs) {
  json deployment = one(docs, "Deployment");
  json service = one(docs, "Service");
  json mwc = one(docs, "MutatingWebhookConfiguration");
  json account = one(docs, "ServiceAccount");
  json pdb = one(docs, "PodDisruptionBudget");
  json ns = one(docs, "Namespace");
  const std::string namespace_name = ns["metadata"]["name"];
  for (const auto& d : {deployment, service, account, pdb})
    CHECK(d["metadata"]["namespace"] == namespace_name);
  CHECK_FALSE(ns["metadata"]["labels"].contains(gpuwise::advisor::kNamespaceLabel));

  // The MutatingWebhookConfiguration: never blocks a pod, never calls out of band.
  REQUIRE(mwc["webhooks"].size() == 1);
  const json& hook = mwc["webhooks"][0];
  CHECK(hook["failurePolicy"] == "Ignore");
  CHECK(hook["sideEffects"] == "None");
  CHECK(hook["timeoutSeconds"].get<int>() <= 10);
  CHECK(hook["admissionReviewVersions"] == json::array({"v1"}));
  CHECK(hook["namespaceSelector"]["matchLabels"][gpuwise::advisor::kNamespaceLabel] == "enabled");
  CHECK(hook["rules"] == json::parse(R"([{"operations":["CREATE"],"apiGroups":[""],
    "apiVersions":["v1"],"resources":["pods"],"scope":"Namespaced"}])"));
  const json& target = hook["clientConfig"]["service"];
  CHECK(target["name"] == service["metadata"]["name"]);
  CHECK(target["namespace"] == namespace_name);
  CHECK(target["path"] == "/mutate");
  CHECK(target["port"] == service["spec"]["ports"][0]["port"]);

  // Service -> pod port -> the webhook's --listen.
  const json& pod = deployment["spec"]["template"];
  for (auto it = service["spec"]["selector"].begin(); it != service["spec"]["selector"].end(); ++it)
    CHECK(pod["metadata"]["labels"][it.key()] == it.value());
  CHECK(pdb["spec"]["selector"]["matchLabels"] == deployment["spec"]["selector"]["matchLabels"]);
  const json& webhook = container(deployment, "webhook");
  const json& port = webhook["ports"][0];
  CHECK(service["spec"]["ports"][0]["targetPort"] == port["name"]);
  const json& args = webhook["args"];
  REQUIRE(args.size() >= 4);
  CHECK(args[0] == "webhook");
  CHECK(args[1] == "--listen=:" + std::to_string(port["containerPort"].get<int>()));
  for (const char* probe : {"readinessProbe", "livenessProbe"}) {
    CHECK(webhook[probe]["httpGet"]["scheme"] == "HTTPS");
    CHECK(webhook[probe]["httpGet"]["port"] == port["name"]);
  }
  CHECK(webhook["readinessProbe"]["httpGet"]["path"] == "/readyz");
  CHECK(webhook["livenessProbe"]["httpGet"]["path"] == "/healthz");

  // The certificate files are in the Secret's volume; the injected image is this image.
  std::string mount = webhook["volumeMounts"][0]["mountPath"];
  CHECK(args[2] == "--tls-cert=" + mount + "/tls.crt");
  CHECK(args[3] == "--tls-key=" + mount + "/tls.key");
  CHECK(pod["spec"]["volumes"][0]["secret"]["secretName"] == "gpuwise-webhook-tls");
  CHECK(webhook["env"][0] == json({{"name", "GPUWISE_IMAGE"}, {"value", webhook["image"]}}));
  CHECK(pod["spec"]["serviceAccountName"] == account["metadata"]["name"]);
  CHECK(account["automountServiceAccountToken"] == false);
  CHECK(pod["spec"]["securityContext"]["runAsNonRoot"] == true);

  // Only the API server reaches the webhook pods, and only their HTTPS port: one ingress rule,
  // one port, sources named by address (no pod or namespace selector lets a pod in).
  json policy = one(docs, "NetworkPolicy");
  CHECK(policy["metadata"]["namespace"] == namespace_name);
  CHECK(policy["spec"]["podSelector"]["matchLabels"] ==
        deployment["spec"]["selector"]["matchLabels"]);
  CHECK(policy["spec"]["policyTypes"] == json::array({"Ingress"}));
  REQUIRE(policy["spec"]["ingress"].size() == 1);
  const json& rule = policy["spec"]["ingress"][0];
  CHECK(rule["ports"] == json::array({{{"protocol", "TCP"}, {"port", port["name"]}}}));
  REQUIRE(!rule["from"].empty());
  for (const auto& from : rule["from"]) {
    CHECK(from.size() == 1);
    CHECK(from.contains("ipBlock"));
  }
}

} // namespace

TEST_CASE("kustomize: the base and the cert-manager overlay render consistent objects",
          "[.kubectl]") {
  TempDir scratch;
  requireKustomize(scratch);
  json base = kustomize(kubernetesDir() + "/base", scratch);
  CHECK(base.size() == 7);
  checkBase(base);
  CHECK_FALSE(one(base, "MutatingWebhookConfiguration")["metadata"].contains("annotations"));

  json cm = kustomize(kubernetesDir() + "/overlays/cert-manager", scratch);
  checkBase(cm);
  json cert = one(cm, "Certificate");
  json issuer = one(cm, "Issuer");
  CHECK(cert["spec"]["secretName"] == "gpuwise-webhook-tls");
  CHECK(cert["spec"]["issuerRef"]["name"] == issuer["metadata"]["name"]);
  json service = one(cm, "Service");
  std::string dns = service["metadata"]["name"].get<std::string>() + "." +
                    service["metadata"]["namespace"].get<std::string>() + ".svc";
  CHECK(std::find(cert["spec"]["dnsNames"].begin(), cert["spec"]["dnsNames"].end(), dns) !=
        cert["spec"]["dnsNames"].end());
  CHECK(one(cm, "MutatingWebhookConfiguration")["metadata"]["annotations"]
                                               ["cert-manager.io/inject-ca-from"] ==
        cert["metadata"]["namespace"].get<std::string>() + "/" +
            cert["metadata"]["name"].get<std::string>());
}

TEST_CASE("kustomize: the self-signed overlay carries the script's certificate and CA",
          "[.openssl]") {
  TempDir scratch;
  requireKustomize(scratch);
  requireTool("openssl");
  // A copy, so the script writes its files outside the source tree.
  fs::copy(kubernetesDir(), scratch / "kubernetes", fs::copy_options::recursive);
  std::string overlay = scratch / "kubernetes/overlays/self-signed";
  Run cert = run({"bash", repoPath("containers/scripts/make-webhook-cert.sh"), "--out", overlay},
                 scratch.path, scratch, "cert");
  INFO(cert.err);
  REQUIRE(cert.rc == 0);
  Run verify = run({"openssl", "verify", "-CAfile", overlay + "/ca.crt", overlay + "/tls.crt"},
                   scratch.path, scratch, "verify");
  CHECK(verify.rc == 0);
  Run san =
      run({"openssl", "x509", "-in", overlay + "/tls.crt", "-noout", "-ext", "subjectAltName"},
          scratch.path, scratch, "san");
  CHECK(san.out.find("DNS:gpuwise-webhook.gpuwise.svc,") != std::string::npos);

  json docs = kustomize(overlay, scratch);
  checkBase(docs);
  CHECK(ofKind(docs, "Certificate").empty());
  CHECK(ofKind(docs, "Issuer").empty());
  json secret = one(docs, "Secret");
  CHECK(secret["type"] == "kubernetes.io/tls");
  CHECK(secret["metadata"]["name"] == "gpuwise-webhook-tls");
  auto decoded = [](const json& v) {
    std::string s = v.get<std::string>();
    s.erase(std::remove(s.begin(), s.end(), '\n'), s.end());
    return decodeBase64(s);
  };
  CHECK(decoded(secret["data"]["tls.crt"]) == readFile(overlay + "/tls.crt"));
  CHECK(decoded(secret["data"]["tls.key"]) == readFile(overlay + "/tls.key"));
  json mwc = one(docs, "MutatingWebhookConfiguration");
  CHECK(decoded(mwc["webhooks"][0]["clientConfig"]["caBundle"]) == readFile(overlay + "/ca.crt"));
}

TEST_CASE("kustomize: the example workloads, injected by the webhook, are consistent pods",
          "[.kubectl]") {
  TempDir scratch;
  requireKustomize(scratch);
  json docs = kustomize(kubernetesDir() + "/examples", scratch);
  json ns = one(docs, "Namespace");
  CHECK(ns["metadata"]["labels"][gpuwise::advisor::kNamespaceLabel] == "enabled");
  json monitoring = kustomize(kubernetesDir() + "/monitoring", scratch);
  json monitor = one(monitoring, "PodMonitor");
  CHECK(monitor["spec"]["selector"]["matchLabels"][gpuwise::advisor::kInjectedLabel] == "true");
  CHECK(monitor["spec"]["podMetricsEndpoints"][0]["port"] == gpuwise::advisor::kMetricsPortName);
  CHECK(monitor["spec"]["podMetricsEndpoints"][0]["honorLabels"] == true);
  CHECK(monitor["spec"]["namespaceSelector"]["any"] == true);

  gpuwise::advisor::InjectionConfig config;
  config.image = "ghcr.io/gpuwise/gpuwise:0.1.0";
  int injected = 0;
  for (const char* kind : {"Job", "Deployment"}) {
    INFO(kind);
    json workload = one(docs, kind);
    json pod = {{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata", workload["spec"]["template"]["metadata"]},
                {"spec", workload["spec"]["template"]["spec"]}};
    pod["metadata"]["generateName"] = workload["metadata"]["name"].get<std::string>() + "-";
    json review = {{"apiVersion", "admission.k8s.io/v1"},
                   {"kind", "AdmissionReview"},
                   {"request",
                    {{"uid", std::string("example-") + kind},
                     {"kind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
                     {"operation", "CREATE"},
                     {"namespace", workload["metadata"]["namespace"]},
                     {"object", pod}}}};
    auto answer = gpuwise::advisor::reviewAdmission(review.dump(), config, {});
    REQUIRE(answer.http_status == 200);
    json response = json::parse(answer.body)["response"];
    REQUIRE(response.contains("patch"));
    json patched =
        applyJsonPatch(pod, json::parse(decodeBase64(response["patch"].get<std::string>())));
    std::string gpu_container = pod["spec"]["containers"][0]["name"];
    auto problems = podProblems(patched, {true, true, {gpu_container}});
    for (const auto& p : problems)
      UNSCOPED_INFO(p);
    CHECK(problems.empty());
    // What the PodMonitor selects and scrapes is what the webhook put there.
    CHECK(patched["metadata"]["labels"][gpuwise::advisor::kInjectedLabel] == "true");
    const json& advisor = patched["spec"]["initContainers"][1];
    CHECK(advisor["ports"][0]["name"] == monitor["spec"]["podMetricsEndpoints"][0]["port"]);
    if (std::string(kind) == "Job") {
      CHECK(advisor["volumeMounts"][1]["name"] == "reports"); // gpuwise.io/report-volume
      CHECK(workload["spec"]["template"]["spec"]["restartPolicy"] == "Never");
    }
    ++injected;
  }
  CHECK(injected == 2);

  // The metrics port of injected pods admits only Prometheus; every other port of theirs stays
  // open to all, so the training pod's own traffic is untouched.
  json policy = one(docs, "NetworkPolicy");
  CHECK(policy["metadata"]["namespace"] == ns["metadata"]["name"]);
  CHECK(policy["spec"]["podSelector"] ==
        json({{"matchLabels", {{gpuwise::advisor::kInjectedLabel, "true"}}}}));
  CHECK(policy["spec"]["policyTypes"] == json::array({"Ingress"}));
  const int metrics_port = config.metrics_port;
  // Per protocol and port: admitted from anywhere, or only from selected peers.
  auto admits = [&](const std::string& protocol, int p, bool from_anywhere) {
    for (const auto& rule : policy["spec"]["ingress"]) {
      if (from_anywhere != !rule.contains("from")) continue;
      for (const auto& range : rule["ports"]) {
        int first = range["port"].get<int>();
        int last = range.contains("endPort") ? range["endPort"].get<int>() : first;
        if (range["protocol"] == protocol && p >= first && p <= last) return true;
      }
    }
    return false;
  };
  CHECK_FALSE(admits("TCP", metrics_port, true));
  CHECK(admits("TCP", metrics_port, false));
  int open_ports = 0;
  for (int p = 1; p <= 65535; ++p)
    open_ports += admits("TCP", p, true) + admits("UDP", p, true) + admits("SCTP", p, true);
  CHECK(open_ports == 3 * 65535 - 1);
  for (const auto& rule : policy["spec"]["ingress"]) {
    if (!rule.contains("from")) continue;
    REQUIRE(rule["from"].size() == 1);
    const json& peer = rule["from"][0];
    CHECK(peer["podSelector"]["matchLabels"]["app.kubernetes.io/name"] == "prometheus");
    CHECK(peer["namespaceSelector"]["matchLabels"].contains("kubernetes.io/metadata.name"));
  }

  json hpa = one(docs, "HorizontalPodAutoscaler");
  CHECK(hpa["spec"]["scaleTargetRef"]["name"] == one(docs, "Deployment")["metadata"]["name"]);
}

// kustomize v5 (kubectl 1.27+) warns on every render of a deprecated field; the files use
// `resources` and `patches` instead. Read without kubectl, so it holds where kubectl is missing.
TEST_CASE("kustomize: no kustomization uses a field kustomize v5 deprecates") {
  const std::vector<std::string> deprecated{
      "bases:", "patchesJson6902:", "patchesStrategicMerge:", "commonLabels:",
      "vars:",  "imageTags:"};
  size_t files = 0;
  for (const auto& e : fs::recursive_directory_iterator(kubernetesDir())) {
    if (e.path().filename() != "kustomization.yaml") continue;
    ++files;
    std::istringstream lines(gpuwise::advisor::test::readFile(e.path().string()));
    for (std::string line; std::getline(lines, line);)
      for (const auto& field : deprecated) {
        INFO(e.path().string() << ": " << line);
        CHECK(line.rfind(field, 0) != 0);
      }
  }
  CHECK(files == 5);
}

// And kubectl itself renders each of them with nothing on stderr (kustomize() throws otherwise);
// the self-signed overlay, which needs the cert script's files, in its own case above.
TEST_CASE("kustomize: every kustomization renders without warnings", "[.kubectl]") {
  TempDir scratch;
  requireKustomize(scratch);
  for (const char* dir : {"base", "overlays/cert-manager", "monitoring", "examples"}) {
    INFO(dir);
    CHECK_NOTHROW(kustomize(kubernetesDir() + "/" + dir, scratch));
  }
}

TEST_CASE("Dockerfile: stages, COPY sources and the paths the webhook injects") {
  // No Docker engine here: the Dockerfile is checked as text. What a build would catch first:
  // a COPY of a file that is not in the context, a --from that names no earlier stage.
  std::ifstream in(repoPath("containers/Dockerfile"));
  REQUIRE(in.good());
  std::vector<std::string> instructions;
  std::string pending;
  for (std::string line; std::getline(in, line);) {
    if (pending.empty() && (line.empty() || line[0] == '#')) continue;
    if (!line.empty() && line.back() == '\\') {
      pending += line.substr(0, line.size() - 1) + " ";
      continue;
    }
    instructions.push_back(pending + line);
    pending.clear();
  }
  std::set<std::string> stages, args_before_from;
  std::string last_user, entrypoint, current_stage;
  bool shim_copied = false;
  int froms = 0;
  std::vector<std::string> reincluded;
  {
    std::istringstream ignore(readFile(repoPath("containers/Dockerfile.dockerignore")));
    for (std::string line; std::getline(ignore, line);) {
      if (line.empty() || line[0] != '!') continue;
      std::string keep = line.substr(1);
      while (!keep.empty() && keep.back() == '/')
        keep.pop_back();
      reincluded.push_back(keep);
    }
  }
  for (const auto& ins : instructions) {
    std::istringstream words(ins);
    std::vector<std::string> w;
    for (std::string s; words >> s;)
      w.push_back(s);
    INFO(ins);
    if (w[0] == "ARG" && froms == 0) args_before_from.insert(w[1].substr(0, w[1].find('=')));
    if (w[0] == "FROM") {
      ++froms;
      if (w[1].rfind("${", 0) == 0)
        CHECK(args_before_from.count(w[1].substr(2, w[1].size() - 3)) == 1);
      else if (w[1].find(':') == std::string::npos)
        CHECK(stages.count(w[1]) == 1); // FROM an earlier stage
      REQUIRE(w.size() == 4);
      CHECK(w[2] == "AS");
      current_stage = w[3];
      stages.insert(current_stage);
    }
    if (w[0] == "COPY") {
      size_t i = 1;
      std::string from;
      for (; i < w.size() && w[i].rfind("--", 0) == 0; ++i)
        if (w[i].rfind("--from=", 0) == 0) from = w[i].substr(7);
      std::string dest = w.back();
      if (!from.empty()) {
        CHECK(stages.count(from) == 1);
        CHECK(from != current_stage);
      } else {
        for (size_t k = i; k + 1 < w.size(); ++k) {
          CHECK(fs::exists(repoPath(w[k])));
          // Sent in the context: a `!` line of the ignore file re-includes it or a folder above.
          bool included = false;
          for (const auto& keep : reincluded)
            included = included || w[k] == keep || w[k].rfind(keep + "/", 0) == 0;
          CHECK(included);
        }
      }
      if (dest == std::string(gpuwise::advisor::kImageShimDir)) shim_copied = true;
    }
    if (w[0] == "USER") last_user = w[1];
    if (w[0] == "ENTRYPOINT") entrypoint = ins.substr(ins.find('['));
  }
  CHECK(froms == 3);
  CHECK(current_stage == "runtime");
  CHECK(last_user == "65532:65532"); // the UID the injected containers run as
  CHECK(entrypoint == std::string("[\"") + gpuwise::advisor::kImageGpuwise + "\"]");
  CHECK(shim_copied);
}

TEST_CASE("container scripts: shellcheck-clean", "[.shellcheck]") {
  requireTool("shellcheck");
  TempDir scratch;
  std::vector<std::string> scripts;
  for (const auto& e : fs::directory_iterator(repoPath("containers/scripts")))
    scripts.push_back(e.path().string());
  std::sort(scripts.begin(), scripts.end());
  REQUIRE(scripts.size() == 3);
  std::vector<std::string> argv = {"shellcheck"};
  argv.insert(argv.end(), scripts.begin(), scripts.end());
  Run sc = run(argv, scratch.path, scratch, "shellcheck");
  INFO(sc.out);
  CHECK(sc.rc == 0);
}

TEST_CASE("container scripts: the shim bundle resolves its own libraries", "[.bundle]") {
  requireTool("patchelf");
  requireTool("objdump");
  std::string shim = gpuwise::advisor::test::buildDir() + "/lib/libgpuwise.so";
  if (!fs::exists(shim)) gpuwise::test::skipTest(shim + " is not built (the gpuwise target)");
  TempDir scratch;
  Run bundle = run({"bash", repoPath("containers/scripts/bundle-elf.sh"), shim, scratch / "shim"},
                   scratch.path, scratch, "bundle");
  INFO(bundle.err);
  REQUIRE(bundle.rc == 0);
  Run ldd = run({"ldd", scratch / "shim/libgpuwise.so"}, scratch.path, scratch, "ldd");
  // libzmq (and what it needs) comes from the bundle, glibc and libstdc++ from the process.
  CHECK(ldd.out.find("libzmq.so.5 => " + (scratch / "shim/deps/libzmq.so.5")) != std::string::npos);
  CHECK(ldd.out.find("not found") == std::string::npos);
  CHECK_FALSE(fs::exists(scratch / "shim/deps/libc.so.6"));
  CHECK_FALSE(fs::exists(scratch / "shim/deps/libstdc++.so.6"));
  CHECK(readFile(scratch / "shim/REQUIRED_GLIBC").rfind("GLIBC_2.", 0) == 0);
}

TEST_CASE("container scripts: the runtime's Debian packages are listed", "[.dpkg]") {
  requireTool("dpkg");
  TempDir scratch;
  // bin/gpuwise and the module holding run, advisor and webhook (ZeroMQ, OpenSSL, httplib), as the
  // Dockerfile passes them.
  Run pkgs = run({"bash", repoPath("containers/scripts/runtime-packages.sh"),
                  gpuwise::advisor::test::buildDir() + "/bin/gpuwise",
                  gpuwise::advisor::test::buildDir() + "/lib/libgpuwise_live.so"},
                 scratch.path, scratch, "packages");
  INFO(pkgs.err);
  CHECK(pkgs.rc == 0);
  for (const char* p : {"libzmq5\n", "libssl3\n", "libcpp-httplib0.11\n"})
    CHECK(pkgs.out.find(p) != std::string::npos);
  CHECK(pkgs.out.find("i386") == std::string::npos);
}
