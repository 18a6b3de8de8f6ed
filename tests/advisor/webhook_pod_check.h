// Test-side checks for the admission webhook, independent of the code under test:
//   - applyJsonPatch: RFC 6902 applied as strictly as the API server does (evanphx/json-patch):
//     every parent must exist, array indices are decimal and in range, "-" only appends, "~0" and
//     "~1" are the only escapes. (nlohmann::json::patch creates missing parents, so it would hide
//     the very bug this must catch.)
//   - podProblems: what the API server's validation and the kubelet would refuse or mis-run in a
//     pod after injection: dangling volume mounts, duplicate names, missing images, and every
//     promise of the injection layout (advisor/webhook/injection_config.h).
#pragma once

#include "tests/base64.h"

#include <nlohmann/json.hpp>

#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpuwise::advisor::test {

using json = nlohmann::json;
using gpuwise::test::decodeBase64;

inline std::vector<std::string> pointerTokens(const std::string& pointer) {
  if (pointer.empty()) return {};
  if (pointer[0] != '/')
    throw std::runtime_error("pointer '" + pointer + "' does not start with /");
  std::vector<std::string> tokens;
  std::string cur;
  for (size_t i = 1; i <= pointer.size(); ++i) {
    if (i == pointer.size() || pointer[i] == '/') {
      tokens.push_back(cur);
      cur.clear();
    } else if (pointer[i] == '~') {
      if (i + 1 >= pointer.size() || (pointer[i + 1] != '0' && pointer[i + 1] != '1'))
        throw std::runtime_error("pointer '" + pointer + "' has a bad ~ escape");
      cur += pointer[++i] == '0' ? '~' : '/';
    } else {
      cur += pointer[i];
    }
  }
  return tokens;
}

inline size_t arrayIndex(const std::string& token, size_t limit, const std::string& path) {
  if (token.empty() || token.size() > 9 || (token.size() > 1 && token[0] == '0'))
    throw std::runtime_error(path + ": bad array index '" + token + "'");
  for (char c : token)
    if (c < '0' || c > '9') throw std::runtime_error(path + ": bad array index '" + token + "'");
  size_t i = std::stoul(token);
  if (i > limit) throw std::runtime_error(path + ": index " + token + " out of range");
  return i;
}

inline json applyJsonPatch(json doc, const json& ops) {
  if (!ops.is_array()) throw std::runtime_error("the patch is not an array");
  for (const auto& op : ops) {
    if (!op.is_object() || !op.contains("op") || !op.contains("path") || !op["path"].is_string())
      throw std::runtime_error("an operation lacks op or path: " + op.dump());
    const std::string kind = op["op"].get<std::string>();
    const std::string path = op["path"].get<std::string>();
    if ((kind == "add" || kind == "replace" || kind == "test") && !op.contains("value"))
      throw std::runtime_error(kind + " " + path + " has no value");
    auto tokens = pointerTokens(path);
    if (tokens.empty()) {
      if (kind != "add" && kind != "replace") throw std::runtime_error(kind + " of the root");
      doc = op["value"];
      continue;
    }
    json* parent = &doc;
    for (size_t k = 0; k + 1 < tokens.size(); ++k) {
      if (parent->is_object()) {
        if (!parent->contains(tokens[k]))
          throw std::runtime_error(kind + " " + path + ": missing parent '" + tokens[k] + "'");
        parent = &(*parent)[tokens[k]];
      } else if (parent->is_array()) {
        if (parent->empty()) throw std::runtime_error(kind + " " + path + ": empty array");
        parent = &(*parent)[arrayIndex(tokens[k], parent->size() - 1, path)];
      } else {
        throw std::runtime_error(kind + " " + path + ": parent '" + tokens[k] +
                                 "' is not a container");
      }
    }
    const std::string& last = tokens.back();
    if (parent->is_object()) {
      bool present = parent->contains(last);
      if (kind == "add")
        (*parent)[last] = op["value"];
      else if (!present)
        throw std::runtime_error(kind + " " + path + ": no such member");
      else if (kind == "replace")
        (*parent)[last] = op["value"];
      else if (kind == "remove")
        parent->erase(last);
      else if (kind == "test" && (*parent)[last] != op["value"])
        throw std::runtime_error("test " + path + " failed");
    } else if (parent->is_array()) {
      if (kind == "add") {
        if (last == "-")
          parent->push_back(op["value"]);
        else {
          size_t i = arrayIndex(last, parent->size(), path);
          parent->insert(parent->begin() + static_cast<std::ptrdiff_t>(i), op["value"]);
        }
      } else {
        if (parent->empty()) throw std::runtime_error(kind + " " + path + ": empty array");
        size_t i = arrayIndex(last, parent->size() - 1, path);
        if (kind == "replace")
          (*parent)[i] = op["value"];
        else if (kind == "remove")
          parent->erase(parent->begin() + static_cast<std::ptrdiff_t>(i));
        else if (kind == "test" && (*parent)[i] != op["value"])
          throw std::runtime_error("test " + path + " failed");
      }
    } else {
      throw std::runtime_error(kind + " " + path + ": the parent is not an object or array");
    }
  }
  return doc;
}

// What an injected pod must satisfy. Expectations about gpuwise itself are checked only when
// `injected` is true; the generic rules (mounts name volumes, unique names) always.
struct PodExpectations {
  bool injected = true;
  bool native_sidecar = true;
  std::vector<std::string> gpu_containers; // must carry the injection
  std::string mount_path = "/gpuwise";
  std::string endpoint = "ipc:///gpuwise/sock/advisor";
};

inline const json* envVar(const json& container, const std::string& name) {
  if (!container.contains("env")) return nullptr;
  for (const auto& e : container["env"])
    if (e.value("name", "") == name) return &e;
  return nullptr;
}

// What the injection must have put into GPU container `c` (named `want`): the shim preloaded and
// as CUDA injection, the endpoint, the downward-API identity and the gpuwise volume.
inline void injectionProblems(const json& c, const std::string& want, const PodExpectations& x,
                              std::vector<std::string>& problems) {
  auto fail = [&](const std::string& p) { problems.push_back(p); };
  const json* preload = envVar(c, "LD_PRELOAD");
  if (!preload ||
      preload->value("value", "").find(x.mount_path + "/libgpuwise.so") == std::string::npos)
    fail(want + ": LD_PRELOAD lacks the shim");
  const json* inj = envVar(c, "CUDA_INJECTION64_PATH");
  if (!inj || inj->value("value", "") != x.mount_path + "/libgpuwise.so")
    fail(want + ": CUDA_INJECTION64_PATH is not the shim");
  const json* ep = envVar(c, "GPUWISE_ENDPOINT");
  if (!ep || ep->value("value", "") != x.endpoint) fail(want + ": GPUWISE_ENDPOINT is wrong");
  for (auto [var, field] : {std::pair<const char*, const char*>{"GPUWISE_POD", "metadata.name"},
                            {"GPUWISE_NAMESPACE", "metadata.namespace"},
                            {"GPUWISE_NODE", "spec.nodeName"}}) {
    const json* e = envVar(c, var);
    if (!e || !e->contains("valueFrom") ||
        (*e)["valueFrom"]["fieldRef"].value("fieldPath", "") != field)
      fail(want + ": " + var + " is not the downward API's " + field);
  }
  const json* cn = envVar(c, "GPUWISE_CONTAINER");
  if (!cn || cn->value("value", "") != want) fail(want + ": GPUWISE_CONTAINER is not its name");
  bool mounted = false;
  for (const auto& m : c.value("volumeMounts", json::array()))
    mounted =
        mounted || (m.value("name", "") == "gpuwise" && m.value("mountPath", "") == x.mount_path);
  if (!mounted) fail(want + " does not mount the gpuwise volume");
}

// How many entries of a container list are named `name`.
inline int countNamed(const json& list, const std::string& name) {
  int n = 0;
  for (const auto& c : list)
    n += c.value("name", "") == name;
  return n;
}

inline std::vector<std::string> podProblems(const json& pod, const PodExpectations& x) {
  std::vector<std::string> problems;
  auto fail = [&](const std::string& p) { problems.push_back(p); };
  const json& spec = pod.at("spec");
  std::set<std::string> volumes;
  for (const auto& v : spec.value("volumes", json::array()))
    if (!volumes.insert(v.value("name", "")).second)
      fail("duplicate volume " + v.value("name", ""));

  std::set<std::string> container_names;
  std::set<std::pair<std::string, int>> ports;
  auto checkContainer = [&](const json& c, const std::string& list) {
    std::string name = c.value("name", "");
    if (name.empty()) fail(list + ": a container without a name");
    if (!container_names.insert(name).second) fail("duplicate container name " + name);
    if (c.value("image", "").empty()) fail("container " + name + " has no image");
    std::set<std::string> env_names, mount_paths;
    for (const auto& e : c.value("env", json::array())) {
      if (!env_names.insert(e.value("name", "")).second)
        fail("container " + name + ": duplicate env " + e.value("name", ""));
      if (e.contains("value") && !e["value"].is_string())
        fail("container " + name + ": env " + e.value("name", "") + " value is not a string");
    }
    for (const auto& m : c.value("volumeMounts", json::array())) {
      if (!volumes.count(m.value("name", "")))
        fail("container " + name + " mounts volume " + m.value("name", "") +
             " that does not exist");
      if (!mount_paths.insert(m.value("mountPath", "")).second)
        fail("container " + name + ": duplicate mountPath " + m.value("mountPath", ""));
    }
    for (const auto& p : c.value("ports", json::array())) {
      if (p.contains("name") && p["name"].get<std::string>().size() > 15)
        fail("container " + name + ": port name longer than 15");
      if (!ports.insert({p.value("protocol", "TCP"), p.value("containerPort", 0)}).second)
        fail("port " + std::to_string(p.value("containerPort", 0)) + " used twice in the pod");
    }
  };
  const json init = spec.value("initContainers", json::array());
  const json containers = spec.value("containers", json::array());
  for (const auto& c : init)
    checkContainer(c, "initContainers");
  for (const auto& c : containers)
    checkContainer(c, "containers");
  if (!x.injected) return problems;

  auto count = countNamed;
  if (!volumes.count("gpuwise")) fail("no gpuwise volume");
  if (count(init, "gpuwise-install") != 1) fail("gpuwise-install is not in initContainers once");
  if (init.empty() || init[0].value("name", "") != "gpuwise-install")
    fail("gpuwise-install is not the first init container");
  const json* advisor = nullptr;
  if (x.native_sidecar) {
    if (count(init, "gpuwise-advisor") != 1) fail("gpuwise-advisor is not in initContainers once");
    if (count(containers, "gpuwise-advisor") != 0) fail("gpuwise-advisor also in containers");
    if (init.size() > 1 && init[1].value("name", "") == "gpuwise-advisor")
      advisor = &init[1];
    else
      fail("gpuwise-advisor is not the second init container");
    if (advisor && advisor->value("restartPolicy", "") != "Always")
      fail("the native sidecar has no restartPolicy: Always");
  } else {
    if (count(containers, "gpuwise-advisor") != 1)
      fail("gpuwise-advisor is not in containers once");
    if (count(init, "gpuwise-advisor") != 0) fail("gpuwise-advisor also in initContainers");
    for (const auto& c : containers)
      if (c.value("name", "") == "gpuwise-advisor") advisor = &c;
    if (advisor && advisor->contains("restartPolicy")) fail("a classic sidecar has restartPolicy");
  }
  if (advisor) {
    std::string args;
    for (const auto& a : advisor->value("args", json::array()))
      args += a.get<std::string>() + " ";
    if (args.find("--listen " + x.endpoint + " ") == std::string::npos)
      fail("the advisor does not listen on " + x.endpoint + ": " + args);
    bool mounted = false;
    for (const auto& m : advisor->value("volumeMounts", json::array()))
      mounted =
          mounted || (m.value("name", "") == "gpuwise" && m.value("mountPath", "") == x.mount_path);
    if (!mounted) fail("the advisor does not mount the gpuwise volume at " + x.mount_path);
    if (!advisor->contains("resources") || !(*advisor)["resources"].contains("requests"))
      fail("the advisor has no resource requests");
  }
  for (const auto& want : x.gpu_containers) {
    const json* c = nullptr;
    for (const auto& k : containers)
      if (k.value("name", "") == want) c = &k;
    if (!c) {
      fail("GPU container " + want + " is gone");
      continue;
    }
    injectionProblems(*c, want, x, problems);
  }
  const json& annotations = pod.at("metadata").value("annotations", json::object());
  if (annotations.value("gpuwise.io/status", "") != "injected") fail("no gpuwise.io/status");
  return problems;
}

} // namespace gpuwise::advisor::test
