// A strict reader of the Prometheus text format 0.0.4 for the metrics tests: series with their
// label values unescaped and their values, HELP and TYPE per family. Throws on a line it cannot
// read, so a malformed exposition fails the test that reads it.
#pragma once

#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpuwise::advisor::test {

struct PromSeries {
  std::string name;
  std::map<std::string, std::string> labels;
  std::vector<std::string> label_order;
  double value = 0;
};

struct PromText {
  std::vector<PromSeries> series;
  std::map<std::string, std::string> help, type;

  // Series of `name` whose labels include every pair of `match`.
  std::vector<PromSeries> find(const std::string& name,
                               const std::map<std::string, std::string>& match = {}) const {
    std::vector<PromSeries> out;
    for (const auto& s : series) {
      if (s.name != name) continue;
      bool ok = true;
      for (const auto& [k, v] : match) {
        auto it = s.labels.find(k);
        ok = ok && it != s.labels.end() && it->second == v;
      }
      if (ok) out.push_back(s);
    }
    return out;
  }
  // The one series of `name` matching `match`; throws unless exactly one.
  double value(const std::string& name,
               const std::map<std::string, std::string>& match = {}) const {
    auto f = find(name, match);
    if (f.size() != 1)
      throw std::runtime_error(name + ": " + std::to_string(f.size()) + " series, expected 1");
    return f[0].value;
  }
};

inline double parsePromValue(const std::string& v) {
  if (v == "+Inf") return 1.0 / 0.0;
  if (v == "-Inf") return -1.0 / 0.0;
  if (v == "NaN") return 0.0 / 0.0;
  size_t used = 0;
  double d = std::stod(v, &used);
  if (used != v.size()) throw std::runtime_error("bad value '" + v + "'");
  return d;
}

inline PromText parseProm(const std::string& text) {
  PromText out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    if (line.rfind("# HELP ", 0) == 0 || line.rfind("# TYPE ", 0) == 0) {
      std::string rest = line.substr(7);
      size_t sp = rest.find(' ');
      if (sp == std::string::npos) throw std::runtime_error("bad line: " + line);
      (line[2] == 'H' ? out.help : out.type)[rest.substr(0, sp)] = rest.substr(sp + 1);
      continue;
    }
    if (line[0] == '#') continue;
    PromSeries s;
    size_t i = 0;
    while (i < line.size() && line[i] != '{' && line[i] != ' ')
      ++i;
    s.name = line.substr(0, i);
    if (i < line.size() && line[i] == '{') {
      ++i;
      while (i < line.size() && line[i] != '}') {
        size_t eq = line.find('=', i);
        if (eq == std::string::npos || eq + 1 >= line.size() || line[eq + 1] != '"')
          throw std::runtime_error("bad labels: " + line);
        std::string key = line.substr(i, eq - i);
        std::string value;
        size_t j = eq + 2;
        for (; j < line.size() && line[j] != '"'; ++j) {
          if (line[j] != '\\') {
            value += line[j];
            continue;
          }
          if (++j >= line.size()) throw std::runtime_error("bad escape: " + line);
          char c = line[j];
          if (c == 'n')
            value += '\n';
          else if (c == '\\' || c == '"')
            value += c;
          else
            throw std::runtime_error("bad escape: " + line);
        }
        if (j >= line.size()) throw std::runtime_error("unterminated label: " + line);
        if (s.labels.count(key)) throw std::runtime_error("duplicate label: " + line);
        s.labels[key] = value;
        s.label_order.push_back(key);
        i = j + 1;
        if (i < line.size() && line[i] == ',') ++i;
      }
      if (i >= line.size()) throw std::runtime_error("unterminated labels: " + line);
      ++i;
    }
    if (i >= line.size() || line[i] != ' ') throw std::runtime_error("no value: " + line);
    s.value = parsePromValue(line.substr(i + 1));
    out.series.push_back(std::move(s));
  }
  return out;
}

// The finding `promtool check metrics` (2.42) prints, naming the family only, for a label name
// matching [a-z][A-Z].
inline const std::string kPromtoolCamelCase =
    " label names should be written in 'snake_case' not 'camelCase'";

// The family of series `name`: the TYPE'd family it is a sample of, else the name itself.
inline std::string promFamilyOf(const PromText& t, const std::string& name) {
  for (const char* suffix : {"", "_bucket", "_sum", "_count"}) {
    std::string sfx = suffix;
    if (name.size() > sfx.size() && name.compare(name.size() - sfx.size(), sfx.size(), sfx) == 0 &&
        t.type.count(name.substr(0, name.size() - sfx.size())))
      return name.substr(0, name.size() - sfx.size());
  }
  return name;
}

// promtool's findings on `exposition` (its output lines in `findings`) less the one finding
// gpuwise accepts: the camelCase one for a family whose only camelCase label name is `modelName`.
// gpuwise's per-GPU series carry dcgm-exporter's label names (UUID, modelName, Hostname, gpu,
// GPU_I_PROFILE, GPU_I_ID) so they join with dcgm-exporter's metrics without label_replace
// (issue 18); of those only modelName matches promtool's [a-z][A-Z], and dcgm-exporter's own
// /metrics gets the same finding. Any other finding, a camelCase label other than modelName
// included, is kept. Returns the kept lines ("" when none).
inline std::string promtoolFindingsBeyondModelName(const std::string& exposition,
                                                   const std::string& findings) {
  auto t = parseProm(exposition);
  std::map<std::string, std::vector<std::string>> camel; // family -> its camelCase label names
  for (const auto& s : t.series)
    for (const auto& [k, v] : s.labels)
      for (size_t i = 0; i + 1 < k.size(); ++i)
        if (k[i] >= 'a' && k[i] <= 'z' && k[i + 1] >= 'A' && k[i + 1] <= 'Z') {
          camel[promFamilyOf(t, s.name)].push_back(k);
          break;
        }
  std::istringstream in(findings);
  std::string line, kept;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    auto at = line.find(kPromtoolCamelCase);
    bool only_model_name = false;
    if (at != std::string::npos && at + kPromtoolCamelCase.size() == line.size()) {
      auto it = camel.find(line.substr(0, at));
      only_model_name = it != camel.end();
      for (const auto& k : it == camel.end() ? std::vector<std::string>{} : it->second)
        only_model_name = only_model_name && k == "modelName";
    }
    if (!only_model_name) kept += line + "\n";
  }
  return kept;
}

} // namespace gpuwise::advisor::test
