// Helpers for the containers/ tests: finding the lane's tools (kubectl, promtool, python3 with
// PyYAML; Debian: kubernetes-client prometheus python3-yaml), running them, YAML to JSON, and the
// metrics contract parsed from docs/metrics.md.
#pragma once

#include "tests/advisor/subprocess.h"

#include <nlohmann/json.hpp>

#include <map>
#include <regex>
#include <set>
#include <sstream>

namespace gpuwise::containers::test {

using json = nlohmann::json;
using advisor::test::Process;
using advisor::test::readFile;
using advisor::test::TempDir;
using advisor::test::which;

using gpuwise::advisor::test::sourceDir;

inline std::string repoPath(const std::string& rel) {
  return sourceDir() + "/" + rel;
}

struct Run {
  int rc = -1;
  std::string out, err;
};

// Runs argv[0] (a name on PATH or a path) in `cwd`; output captured.
inline Run run(std::vector<std::string> argv, const std::string& cwd, const TempDir& scratch,
               const std::string& tag, std::vector<std::string> env = {}) {
  if (argv[0].find('/') == std::string::npos) argv[0] = which(argv[0]);
  Process p(argv, env, cwd, scratch.path, tag);
  Run r;
  r.rc = p.wait(std::chrono::seconds(120)).value_or(-1);
  r.out = p.out();
  r.err = p.err();
  return r;
}

// True when python3 can import yaml (PyYAML: Debian python3-yaml).
inline bool haveYaml(const TempDir& scratch) {
  if (which("python3").empty()) return false;
  return run({"python3", "-c", "import yaml"}, scratch.path, scratch, "haveyaml").rc == 0;
}

// Every YAML document in `file` as one JSON array (documents that are empty are left out).
inline json yamlFileToJson(const std::string& file, const TempDir& scratch) {
  std::string out = scratch / "yaml.json";
  Run r = run({"python3", "-c",
               "import sys, json, yaml\n"
               "docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d is not None]\n"
               "json.dump(docs, open(sys.argv[2], 'w'))\n",
               file, out},
              scratch.path, scratch, "yaml2json");
  if (r.rc != 0) throw std::runtime_error("cannot read YAML " + file + ": " + r.err);
  return json::parse(readFile(out));
}

// `kubectl kustomize DIR` as JSON documents. Its stderr must be empty: kustomize v5 warns there
// about deprecated fields (`bases`, `patchesJson6902`), which every `kubectl apply -k` would print.
inline json kustomize(const std::string& dir, const TempDir& scratch) {
  Run r = run({"kubectl", "kustomize", dir}, scratch.path, scratch, "kustomize");
  if (r.rc != 0) throw std::runtime_error("kubectl kustomize " + dir + " failed: " + r.err);
  if (!r.err.empty())
    throw std::runtime_error("kubectl kustomize " + dir + " printed on stderr: " + r.err);
  std::string file = scratch / "rendered.yaml";
  std::ofstream(file) << r.out;
  return yamlFileToJson(file, scratch);
}

inline std::vector<json> ofKind(const json& docs, const std::string& kind) {
  std::vector<json> found;
  for (const auto& d : docs)
    if (d.value("kind", "") == kind) found.push_back(d);
  return found;
}

inline json one(const json& docs, const std::string& kind) {
  auto found = ofKind(docs, kind);
  if (found.size() != 1)
    throw std::runtime_error("expected one " + kind + ", found " + std::to_string(found.size()));
  return found[0];
}

// docs/metrics.md's table: name -> {type, labels (expanded), help}.
struct MetricSpec {
  std::string type;
  std::set<std::string> labels;
  std::string help;
};

inline std::map<std::string, MetricSpec> metricsContract() {
  std::string doc = readFile(repoPath("docs/metrics.md"));
  std::map<std::string, MetricSpec> contract;
  static const std::regex row(
      R"(^\| `(gpuwise_[a-z0-9_]+)` \| (counter|gauge|histogram) \| ([^|]+) \| ([^|]+) \|$)");
  std::istringstream lines(doc);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (!std::regex_match(line, m, row)) continue;
    MetricSpec s;
    s.type = m[2];
    s.help = m[4];
    while (!s.help.empty() && s.help.back() == ' ')
      s.help.pop_back();
    std::istringstream labels(m[3]);
    for (std::string l; std::getline(labels, l, ',');) {
      l.erase(0, l.find_first_not_of(' '));
      l.erase(l.find_last_not_of(' ') + 1);
      if (l == "common")
        s.labels.insert({"namespace", "pod", "container", "job_name", "rank", "Hostname", "gpu",
                         "cuda_device", "UUID"});
      else if (l == "process")
        s.labels.insert({"namespace", "pod", "container", "job_name", "rank"});
      else
        s.labels.insert(l);
    }
    contract[m[1]] = s;
  }
  return contract;
}

// The contract metric a series name in a query refers to ("x_bucket" of a histogram is "x"),
// or empty when there is none.
inline std::string contractMetric(const std::string& name,
                                  const std::map<std::string, MetricSpec>& contract) {
  if (contract.count(name)) return name;
  for (const char* suffix : {"_bucket", "_sum", "_count"}) {
    std::string s = suffix;
    if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) {
      std::string base = name.substr(0, name.size() - s.size());
      auto it = contract.find(base);
      if (it != contract.end() && it->second.type == "histogram") return base;
    }
  }
  return "";
}

// The names a PromQL expression mentions that are about gpuwise: with `recorded`, the series of
// recording rules (`level:gpuwise_...:operations`, containers/kubernetes/monitoring/
// waste-rules.yaml), else the metrics of the contract (gpuwise_*).
inline std::set<std::string> gpuwiseSeriesNames(const std::string& expr, bool recorded) {
  std::set<std::string> names;
  static const std::regex token(R"([a-zA-Z_:][a-zA-Z0-9_:]*)");
  for (std::sregex_iterator it(expr.begin(), expr.end(), token), end; it != end; ++it) {
    const std::string t = it->str();
    const bool has_colon = t.find(':') != std::string::npos;
    if (recorded ? has_colon && t.find(":gpuwise_") != std::string::npos
                 : !has_colon && t.rfind("gpuwise_", 0) == 0)
      names.insert(t);
  }
  return names;
}

// The gpuwise_* metrics a PromQL expression mentions.
inline std::set<std::string> gpuwiseNames(const std::string& expr) {
  return gpuwiseSeriesNames(expr, false);
}

// The recorded series an expression reads.
inline std::set<std::string> recordedNames(const std::string& expr) {
  return gpuwiseSeriesNames(expr, true);
}

// The series the recording rules of a PrometheusRule file record, and the metrics their
// expressions read, from its text (no YAML parser needed: one `- record: NAME` a line).
struct RecordingRules {
  std::set<std::string> recorded, metrics;
};

inline RecordingRules recordingRules(const std::string& file) {
  RecordingRules r;
  static const std::regex record(R"(^\s*- record: (\S+)\s*$)");
  std::istringstream lines(readFile(file));
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_match(line, m, record))
      r.recorded.insert(m[1]);
    else if (line.find('#') == std::string::npos)
      for (const auto& n : gpuwiseNames(line))
        r.metrics.insert(n);
  }
  return r;
}

} // namespace gpuwise::containers::test
