#include "advisor/precision/name_text.h"

#include "advisor/precision/demangle.h"

namespace gpuwise::profiler {

std::string_view precisionName(Precision p) {
  switch (p) {
  case Precision::Fp64: return "fp64";
  case Precision::Fp32: return "fp32";
  case Precision::Tf32: return "tf32";
  case Precision::Fp16: return "fp16";
  case Precision::Bf16: return "bf16";
  case Precision::Fp8: return "fp8";
  case Precision::Fp4: return "fp4";
  case Precision::Int8: return "int8";
  case Precision::Other: break;
  }
  return "other";
}

std::optional<Precision> parsePrecision(std::string_view name) {
  for (Precision p : kAllPrecisions) {
    if (precisionName(p) == name) return p;
  }
  return std::nullopt;
}

namespace detail {

namespace {

bool isLetter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

char toLower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

bool matchesOne(std::string_view text, std::string_view alt) {
  if (alt.empty()) return false;
  if (alt.front() == '^') return text.substr(0, alt.size() - 1) == alt.substr(1);
  if (alt.front() == '<') return findWordStart(text, alt.substr(1)) != std::string_view::npos;
  return text.find(alt) != std::string_view::npos;
}

} // namespace

NameText::NameText(std::string_view name) {
  text_ = demangle(name);
  for (char& c : text_)
    c = toLower(c);
  constexpr std::string_view kVoid = "void ";
  if (std::string_view(text_).substr(0, kVoid.size()) == kVoid) text_.erase(0, kVoid.size());
}

bool NameText::matches(std::string_view pattern) const {
  if (pattern.empty()) return true;
  size_t start = 0;
  while (start <= pattern.size()) {
    size_t bar = pattern.find('|', start);
    if (bar == std::string_view::npos) bar = pattern.size();
    if (matchesOne(text_, pattern.substr(start, bar - start))) return true;
    start = bar + 1;
  }
  return false;
}

size_t findWordStart(std::string_view hay, std::string_view needle, size_t from) {
  if (needle.empty()) return std::string_view::npos;
  for (size_t pos = hay.find(needle, from); pos != std::string_view::npos;
       pos = hay.find(needle, pos + 1)) {
    if (pos == 0 || !isLetter(hay[pos - 1])) return pos;
  }
  return std::string_view::npos;
}

} // namespace detail
} // namespace gpuwise::profiler
