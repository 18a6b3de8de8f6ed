// `gpuwise webhook` as the API server meets it: a real process serving HTTPS with a CA and key
// made by containers/scripts/make-webhook-cert.sh (openssl), real AdmissionReview documents sent
// with curl over TLS, each answer checked, and every returned patch applied strictly to the pod it
// came for and the result checked for consistency (webhook_pod_check.h).
//
// Needs curl and openssl (Debian: curl, openssl); without them the test says so and checks nothing.
#include "tests/advisor/metrics_parse.h"
#include "tests/advisor/subprocess.h"
#include "tests/advisor/webhook_pod_check.h"
#include "tests/skip_test.h"

#include <catch2/catch.hpp>

#include <regex>

using namespace gpuwise::advisor::test;

namespace {

const std::string kHost = "gpuwise-webhook.gpuwise.svc";

std::string fixtureFile(const std::string& name) {
  return sourceDir() + "/tests/advisor/webhook_fixtures/" + name;
}

void writeFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

// Makes a CA and a serving certificate for kHost with the project's script.
bool makeCert(const TempDir& dir, const std::string& out) {
  Process p({which("bash"), sourceDir() + "/containers/scripts/make-webhook-cert.sh", "--out", out},
            {}, dir.path, dir.path, "cert");
  auto rc = p.wait();
  INFO(p.err());
  return rc == 0;
}

struct Reply {
  int curl_exit = -1;
  int http = 0;
  std::string body;
  std::string err;
};

class Client {
public:
  Client(const TempDir& dir, int port) : dir_(dir), port_(port) {}

  Reply request(const std::string& path, std::vector<std::string> extra, const std::string& ca) {
    std::string tag = "curl" + std::to_string(++n_);
    std::string out = dir_ / (tag + ".body");
    std::vector<std::string> argv = {
        which("curl"), "-sS",
        "--max-time",  "20",
        "-o",          out,
        "-w",          "%{http_code}",
        "--resolve",   kHost + ":" + std::to_string(port_) + ":127.0.0.1"};
    if (!ca.empty()) argv.insert(argv.end(), {"--cacert", ca});
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.push_back("https://" + kHost + ":" + std::to_string(port_) + path);
    Process p(argv, {}, dir_.path, dir_.path, tag);
    Reply r;
    r.curl_exit = p.wait().value_or(-1);
    r.err = p.err();
    std::string code = p.out();
    r.http = code.empty() ? 0 : std::atoi(code.c_str());
    r.body = readFile(out);
    return r;
  }
  Reply post(const std::string& body_file, const std::string& ca,
             std::vector<std::string> extra = {}) {
    extra.insert(extra.begin(),
                 {"-H", "Content-Type: application/json", "--data-binary", "@" + body_file});
    return request("/mutate", extra, ca);
  }

private:
  const TempDir& dir_;
  int port_;
  int n_ = 0;
};

json answerPatch(const Reply& r) {
  json review = json::parse(r.body);
  if (!review["response"].contains("patch")) return nullptr;
  REQUIRE(review["response"]["patchType"] == "JSONPatch");
  return json::parse(decodeBase64(review["response"]["patch"].get<std::string>()));
}

// GPU pods are injected, the patch applies and the pod is consistent; a second call on the
// injected pod (reinvocation) changes nothing.
void injectAndReinvoke(Client& client, const TempDir& dir, const std::string& ca, int& reviews,
                       int& injected) {
  struct Case {
    const char* file;
    std::vector<std::string> gpu;
  };
  for (const auto& [file, gpu] :
       {Case{"pytorchjob_worker.json", {"pytorch"}}, Case{"mig_pod.json", {"server"}}}) {
    INFO(file);
    Reply r = client.post(fixtureFile(file), ca);
    ++reviews, ++injected;
    REQUIRE(r.curl_exit == 0);
    REQUIRE(r.http == 200);
    json doc = json::parse(readFile(fixtureFile(file)));
    json review = json::parse(r.body);
    CHECK(review["response"]["uid"] == doc["request"]["uid"]);
    CHECK(review["response"]["allowed"] == true);
    json patch = answerPatch(r);
    REQUIRE(patch.is_array());
    json pod = applyJsonPatch(doc["request"]["object"], patch);
    auto problems = podProblems(pod, {true, true, gpu});
    for (const auto& p : problems)
      UNSCOPED_INFO(p);
    CHECK(problems.empty());
    CHECK(pod["spec"]["initContainers"][1]["image"] == "registry.example/gpuwise:e2e");

    // The API server may call again after other webhooks (reinvocationPolicy: IfNeeded).
    doc["request"]["object"] = pod;
    writeFile(dir / "again.json", doc.dump());
    Reply again = client.post(dir / "again.json", ca);
    ++reviews;
    REQUIRE(again.http == 200);
    CHECK(answerPatch(again).is_null());
  }
}

// Malformed bodies get 400 with a reason, and the server keeps serving.
void rejectMalformed(Client& client, const TempDir& dir, const std::string& ca, int& rejected) {
  json mig = json::parse(readFile(fixtureFile("mig_pod.json")));
  json v1beta1 = mig;
  v1beta1["apiVersion"] = "admission.k8s.io/v1beta1";
  json no_uid = mig;
  no_uid["request"].erase("uid");
  writeFile(dir / "truncated.json", readFile(fixtureFile("mig_pod.json")).substr(0, 300));
  writeFile(dir / "array.json", "[1, 2, 3]");
  writeFile(dir / "v1beta1.json", v1beta1.dump());
  writeFile(dir / "no_uid.json", no_uid.dump());
  writeFile(dir / "deep.json", std::string(50000, '[') + std::string(50000, ']'));
  writeFile(dir / "huge.json", "{\"pad\": \"" + std::string(4u << 20, 'x') + "\"}");
  struct Case {
    std::string file;
    std::vector<std::string> extra;
    std::string reason;
  };
  for (const auto& c : std::vector<Case>{
           {"truncated.json", {}, "the body is not valid JSON"},
           {"array.json", {}, "the body is not a JSON object"},
           {"v1beta1.json", {}, "apiVersion is 'admission.k8s.io/v1beta1'"},
           {"no_uid.json", {}, "the AdmissionReview request has no uid"},
           {"deep.json", {}, "nested deeper than 64"},
           {"huge.json", {}, "more than the 3145728"},
           {"huge.json", {"-H", "Transfer-Encoding: chunked"}, "more than the 3145728"},
           {"mig_pod.json", {"-H", "Content-Type: text/plain"}, "not application/json"}}) {
    INFO(c.file << " " << (c.extra.empty() ? "" : c.extra.back()));
    std::string path = c.file == "mig_pod.json" ? fixtureFile(c.file) : dir / c.file;
    std::vector<std::string> extra = c.extra;
    Reply r =
        c.extra.size() == 2 && c.extra[1] == "Content-Type: text/plain"
            ? client.request("/mutate",
                             {"-H", "Content-Type: text/plain", "--data-binary", "@" + path}, ca)
            : client.post(path, ca, extra);
    ++rejected;
    INFO(r.err);
    CHECK(r.http == 400);
    CHECK(r.body.find(c.reason) != std::string::npos);
    Reply health = client.request("/healthz", {}, ca);
    CHECK(health.http == 200);
  }
}

// Twelve reviews at once, each answered with a patch.
void burstOfReviews(const TempDir& dir, const std::string& ca, int port, int& reviews,
                    int& injected) {
  std::vector<std::unique_ptr<Process>> burst;
  for (int i = 0; i < 12; ++i) {
    burst.push_back(std::make_unique<Process>(
        std::vector<std::string>{which("curl"), "-sS", "--max-time", "20", "-o",
                                 dir / ("burst" + std::to_string(i)), "--resolve",
                                 kHost + ":" + std::to_string(port) + ":127.0.0.1", "--cacert", ca,
                                 "-H", "Content-Type: application/json", "--data-binary",
                                 "@" + fixtureFile("pytorchjob_worker.json"),
                                 "https://" + kHost + ":" + std::to_string(port) + "/mutate"},
        std::vector<std::string>{}, dir.path, dir.path, "burst" + std::to_string(i)));
    ++reviews, ++injected;
  }
  for (int i = 0; i < 12; ++i) {
    REQUIRE(burst[i]->wait() == 0);
    CHECK(answerPatch({0, 200, readFile(dir / ("burst" + std::to_string(i))), ""}).is_array());
  }
}

} // namespace

// promtool's verdict on the webhook's /metrics, when promtool is installed.
void lintWithPromtool(const std::string& exposition, const TempDir& dir) {
  if (which("promtool").empty()) {
    WARN("promtool is not installed: the webhook's /metrics was not linted");
    return;
  }
  writeFile(dir / "webhook.prom", exposition);
  Process lint({"/bin/bash", "-c", "promtool check metrics < \"$0\"", dir / "webhook.prom"}, {},
               dir.path, dir.path, "promtool");
  auto rc = lint.wait(std::chrono::seconds(30));
  INFO(lint.out() << lint.err());
  CHECK(rc == 0);
  CHECK(lint.out().empty());
}

// Its own metrics on the same TLS port: every request the test made counted by its result.
void checkOwnMetrics(Client& client, const TempDir& dir, const std::string& ca, int reviews,
                     int injected, int rejected) {
  Reply scraped = client.request("/metrics", {}, ca);
  REQUIRE(scraped.http == 200);
  lintWithPromtool(scraped.body, dir);
  auto m = parseProm(scraped.body);
  auto admissions = [&](const char* result) {
    return m.value("gpuwise_webhook_admissions_total", {{"result", result}});
  };
  CHECK(admissions("injected") == injected);
  CHECK(admissions("skipped") == reviews - injected);
  CHECK(admissions("rejected") == rejected);
  CHECK(admissions("error") == 0);
  CHECK(m.value("gpuwise_webhook_admission_duration_seconds_count") == reviews + rejected);
}

// Runs as advisor_webhook_e2e_curl_test: curl may be missing where openssl is not.
TEST_CASE("gpuwise webhook over TLS: real AdmissionReviews in, consistent pods out", "[.curl]") {
  if (which("curl").empty() || which("openssl").empty())
    gpuwise::test::skipTest(
        "curl or openssl is not installed (Debian: apt-get install curl openssl)");
  TempDir dir;
  REQUIRE(makeCert(dir, dir / "cert"));
  const std::string ca = dir / "cert/ca.crt";
  Process webhook({buildDir() + "/bin/gpuwise", "webhook", "--listen", "127.0.0.1:0", "--tls-cert",
                   dir / "cert/tls.crt", "--tls-key", dir / "cert/tls.key", "--image",
                   "registry.example/gpuwise:e2e"},
                  {}, dir.path, dir.path, "webhook");
  int port = announcedPort(webhook, "listening on https://127\\.0\\.0\\.1:([0-9]+)");
  INFO(webhook.err());
  REQUIRE(port > 0);
  Client client(dir, port);
  int reviews = 0, injected = 0, rejected = 0;
  std::string serving_ca = ca; // the CA of the certificate served now

  SECTION("GPU pods are injected; the patch applies and the pod is consistent") {
    injectAndReinvoke(client, dir, ca, reviews, injected);
  }

  SECTION("pods that must not change are allowed with no patch and a reason") {
    for (auto [file, reason] : {std::pair<const char*, const char*>{
                                    "cpu_pod.json", "no container requests nvidia.com/gpu or "
                                                    "nvidia.com/mig-*"},
                                {"already_injected.json", "already injected"},
                                {"opted_out.json", "opted out (annotation gpuwise.io/inject)"},
                                {"deployment.json", "not a Pod (apps/Deployment)"}}) {
      INFO(file);
      Reply r = client.post(fixtureFile(file), ca);
      ++reviews;
      REQUIRE(r.http == 200);
      json review = json::parse(r.body);
      CHECK(review["response"]["allowed"] == true);
      CHECK(answerPatch(r).is_null());
      CHECK(review["response"]["status"]["message"] == reason);
    }
  }

  SECTION("malformed bodies get 400 with a reason, and the server keeps serving") {
    rejectMalformed(client, dir, ca, rejected);
  }

  SECTION("health, readiness, and only TLS 1.2 or newer with a certificate for the Service") {
    Reply health = client.request("/healthz", {}, ca);
    CHECK(health.http == 200);
    CHECK(health.body == "ok\n");
    CHECK(client.request("/readyz", {}, ca).http == 200);
    CHECK(client.request("/nothing-here", {}, ca).http == 404);
    CHECK(client.request("/healthz", {"--tlsv1.2", "--tls-max", "1.2"}, ca).http == 200);
    CHECK(client.request("/healthz", {"--tlsv1.3"}, ca).http == 200);
    // Not trusted without the CA (curl 60: peer certificate cannot be authenticated).
    CHECK(client.request("/healthz", {}, "").curl_exit == 60);
    // TLS 1.1 offered (the client's security level lowered so it may): the server refuses it.
    Process s_client({which("openssl"), "s_client", "-connect", "127.0.0.1:" + std::to_string(port),
                      "-tls1_1", "-cipher", "DEFAULT:@SECLEVEL=0"},
                     {}, dir.path, dir.path, "s_client");
    auto rc = s_client.wait();
    CHECK(rc != 0);
    CHECK(s_client.err().find("alert protocol version") != std::string::npos);
  }

  SECTION("a renewed certificate is served without a restart") {
    REQUIRE(makeCert(dir, dir / "renewed"));
    // As the kubelet updates a Secret volume: the new files appear whole (rename).
    for (const char* f : {"tls.crt", "tls.key"}) {
      std::filesystem::copy_file(dir / ("renewed/" + std::string(f)),
                                 dir / ("cert/." + std::string(f)),
                                 std::filesystem::copy_options::overwrite_existing);
      std::filesystem::rename(dir / ("cert/." + std::string(f)), dir / ("cert/" + std::string(f)));
    }
    CHECK(eventually(
        [&] { return client.request("/healthz", {}, dir / "renewed/ca.crt").http == 200; },
        std::chrono::seconds(10)));
    CHECK(client.request("/healthz", {}, ca).curl_exit == 60); // the old CA no longer matches
    serving_ca = dir / "renewed/ca.crt";
    CHECK(webhook.err().find("reloaded the TLS certificate") != std::string::npos);
  }

  SECTION("concurrent reviews are all answered") {
    burstOfReviews(dir, ca, port, reviews, injected);
  }

  checkOwnMetrics(client, dir, serving_ca, reviews, injected, rejected);

  ::kill(webhook.pid(), SIGTERM);
  REQUIRE(webhook.wait(std::chrono::seconds(20)) == 0);
  std::string summary = std::to_string(reviews) + " reviews, " + std::to_string(injected) +
                        " pods injected, " + std::to_string(rejected) + " requests rejected";
  CHECK(webhook.err().find("stopping on SIGTERM (" + summary + ")") != std::string::npos);
}

TEST_CASE("gpuwise webhook: a certificate or key it cannot use is one line, exit 2") {
  if (which("openssl").empty())
    gpuwise::test::skipTest("openssl is not installed (Debian: apt-get install openssl)");
  TempDir dir;
  REQUIRE(makeCert(dir, dir / "a"));
  REQUIRE(makeCert(dir, dir / "b"));
  auto run = [&](const std::vector<std::string>& args) {
    std::vector<std::string> argv = {buildDir() + "/bin/gpuwise", "webhook", "--listen",
                                     "127.0.0.1:0"};
    argv.insert(argv.end(), args.begin(), args.end());
    Process p(argv, {}, dir.path, dir.path, "bad");
    auto rc = p.wait();
    return std::make_pair(rc.value_or(-1), p.err());
  };
  auto [rc1, err1] = run({"--tls-cert", dir / "missing.crt", "--tls-key", dir / "a/tls.key"});
  CHECK(rc1 == 2);
  CHECK(err1 == "gpuwise webhook: " + (dir / "missing.crt") + ": No such file or directory\n");
  auto [rc2, err2] = run({"--tls-cert", dir / "a/tls.crt", "--tls-key", dir / "b/tls.key"});
  CHECK(rc2 == 2);
  CHECK(err2 == "gpuwise webhook: " + (dir / "b/tls.key") +
                    ": the key does not match the certificate in " + (dir / "a/tls.crt") + "\n");
  auto [rc3, err3] = run({"--tls-cert", dir / "a/ca.crt", "--tls-key", dir / "a/ca.crt"});
  CHECK(rc3 == 2);
  CHECK(err3.rfind("gpuwise webhook: " + (dir / "a/ca.crt") + ": not a PEM private key", 0) == 0);
  auto [rc4, err4] = run({"--tls-cert", dir / "a/tls.crt", "--tls-key", dir / "a/tls.key",
                          "--sidecar-memory", "lots"});
  CHECK(rc4 == 2);
  CHECK(err4 == "gpuwise webhook: --sidecar-memory 'lots' is not a Kubernetes quantity\n");
  auto [rc5, err5] = run({"--tls-cert", dir / "a/tls.crt"});
  CHECK(rc5 == 2);
  CHECK(err5.find("--tls-key is required") != std::string::npos);
}
