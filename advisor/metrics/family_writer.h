// The lines of the Prometheus text exposition (format 0.0.4), one metric family at a time: the
// HELP and TYPE lines before a family's first series, then one line per series with its labels
// and value. What a label value and a number look like on those lines is decided here too.
//
// Pure functions and a writer that appends to a caller's string; one owner at a time.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpuwise::advisor::metrics {

// The longest label value exported, in bytes. Kubernetes object names (pods, the longest of the
// labels) are at most 253 bytes, so no real name is ever cut; a forged one (a Hello carrying 64
// KiB strings) cannot make each series kilobytes long and /metrics hundreds of megabytes.
inline constexpr size_t kMaxLabelValueBytes = 256;

// `value` as a label value Prometheus accepts: every byte that is not part of valid UTF-8 becomes
// U+FFFD, and a value longer than kMaxLabelValueBytes is cut (at a character boundary). A value
// that had to change ends in "~" and 16 hex digits of a hash of the original bytes, so distinct
// originals stay distinct series; valid values up to the bound come back unchanged.
std::string sanitizeLabelValue(std::string_view value);
// "a\"b" -> a\"b with backslash, quote and newline escaped, as label values must be.
std::string escapeLabelValue(std::string_view value);
// The shortest text that reads back as `value` ("0.25", "1e+21", "NaN", "+Inf").
std::string formatValue(double value);

using Labels = std::vector<std::pair<std::string, std::string>>;

// A metric family as docs/metrics.md names it.
struct Family {
  const char* name;
  const char* type; // "gauge", "counter", "histogram"
  const char* help;
};

// `labels` followed by `more`.
Labels withLabels(Labels labels, std::initializer_list<std::pair<std::string, std::string>> more);
// The identity of one series (family and labels, unescaped), for keeping state per series.
std::string seriesKey(const Family& family, const Labels& labels);

// One metric family's lines, appended to `out`; the HELP and TYPE lines only once it has a series,
// so a family nobody has figures for leaves no trace.
class FamilyWriter {
public:
  FamilyWriter(const Family& family, std::string& out) : family_(family), out_(out) {}
  // `suffix`: "" or a histogram part ("_bucket", "_sum", "_count"). Label values are sanitised and
  // escaped here.
  void sample(std::string_view suffix, const Labels& labels, double value);

private:
  void header();

  const Family& family_;
  std::string& out_;
  bool header_written_ = false;
};

} // namespace gpuwise::advisor::metrics
