#include "advisor/metrics/family_writer.h"

#include "profiler/model/text_bytes.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace gpuwise::advisor::metrics {

namespace {

std::string escapeHelp(std::string_view help) {
  std::string out;
  for (char c : help) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

} // namespace

std::string sanitizeLabelValue(std::string_view value) {
  constexpr std::string_view kReplacement = "\xEF\xBF\xBD"; // U+FFFD
  constexpr size_t kSuffixBytes = 1 + 16;                   // "~" and 16 hex digits
  std::string out;
  out.reserve(std::min(value.size(), kMaxLabelValueBytes));
  bool changed = false;
  // Characters are copied while they fit the bound less the suffix, so a value that turns out
  // too long can take its suffix without cutting a character in two.
  size_t fits_with_suffix = 0;
  for (size_t i = 0; i < value.size();) {
    size_t n = model::utf8SequenceLength(value.substr(i));
    std::string_view piece = n ? value.substr(i, n) : kReplacement;
    changed = changed || n == 0;
    i += n ? n : 1;
    if (out.size() + piece.size() > kMaxLabelValueBytes) {
      changed = true;
      break;
    }
    out += piece;
    if (out.size() <= kMaxLabelValueBytes - kSuffixBytes) fits_with_suffix = out.size();
  }
  if (!changed) return out;
  out.resize(std::min(out.size(), fits_with_suffix));
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx",
                static_cast<unsigned long long>(model::fnv1a64(value)));
  out += '~';
  out += hash;
  return out;
}

std::string escapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string formatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  return ec == std::errc() ? std::string(buf, end) : "NaN";
}

Labels withLabels(Labels labels, std::initializer_list<std::pair<std::string, std::string>> more) {
  labels.insert(labels.end(), more.begin(), more.end());
  return labels;
}

std::string seriesKey(const Family& family, const Labels& labels) {
  std::string key = family.name;
  for (const auto& [k, v] : labels)
    key += '\x1f' + k + '=' + v;
  return key;
}

void FamilyWriter::header() {
  out_ += "# HELP ";
  out_ += family_.name;
  out_ += ' ';
  out_ += escapeHelp(family_.help);
  out_ += "\n# TYPE ";
  out_ += family_.name;
  out_ += ' ';
  out_ += family_.type;
  out_ += '\n';
  header_written_ = true;
}

void FamilyWriter::sample(std::string_view suffix, const Labels& labels, double value) {
  if (!header_written_) header();
  out_ += family_.name;
  out_ += suffix;
  out_ += '{';
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i) out_ += ',';
    out_ += labels[i].first;
    out_ += "=\"";
    out_ += escapeLabelValue(sanitizeLabelValue(labels[i].second));
    out_ += '"';
  }
  out_ += "} ";
  out_ += formatValue(value);
  out_ += '\n';
}

} // namespace gpuwise::advisor::metrics
