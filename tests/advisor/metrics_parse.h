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

} // namespace gpuwise::advisor::test
