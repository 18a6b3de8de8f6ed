// Checks that the numbers a person reads in a recommendation are backed by its evidence: every
// number token in the text must equal some numeric evidence value at the precision shown, either
// as is or as a percentage (a value v printed as "12.3%" is 100 v).
#pragma once

#include <nlohmann/json.hpp>

#include <cctype>
#include <cmath>
#include <string>
#include <vector>

namespace gpuwise::advisor::test {

// Number tokens not preceded by a letter, digit, '_' or '.' ("H2D", "fp16" and "x16" are words).
inline std::vector<std::string> numberTokens(const std::string& text) {
  std::vector<std::string> out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) continue;
    char prev = i ? text[i - 1] : ' ';
    bool word = std::isalnum(static_cast<unsigned char>(prev)) || prev == '_' || prev == '.';
    size_t j = i;
    while (j < text.size() && (std::isdigit(static_cast<unsigned char>(text[j])) ||
                               (text[j] == '.' && j + 1 < text.size() &&
                                std::isdigit(static_cast<unsigned char>(text[j + 1])))))
      ++j;
    if (!word) out.push_back(text.substr(i, j - i));
    i = j;
  }
  return out;
}

inline bool matchesShown(double value, const std::string& token) {
  double shown = std::stod(token);
  auto dot = token.find('.');
  int decimals = dot == std::string::npos ? 0 : static_cast<int>(token.size() - dot - 1);
  double half_ulp = 0.5 * std::pow(10.0, -decimals) * (1 + 1e-9);
  return std::fabs(value - shown) <= half_ulp || std::fabs(value * 100.0 - shown) <= half_ulp;
}

inline std::vector<std::string> numbersMissingFromEvidence(const std::string& text,
                                                           const nlohmann::ordered_json& evidence) {
  std::vector<std::string> missing;
  for (const auto& token : numberTokens(text)) {
    bool found = false;
    for (const auto& [k, v] : evidence.items())
      if (v.is_number() && matchesShown(v.get<double>(), token)) found = true;
    if (!found) missing.push_back(token);
  }
  return missing;
}

} // namespace gpuwise::advisor::test
