// Inline SVG charts for the HTML report, drawn by our own code so the page needs no script, no
// library and no network: a step chart of bucketed series over time (utilisation, memory), a
// single 100% stacked bar with its legend (idle causes, precision mix), and horizontal bars
// (top kernels, copies).
//
// Every chart is well-formed XML (usable inside HTML or as a standalone .svg), scales with its
// container (viewBox, width 100%), and is accessible: role="img", a <title> and a <desc> that
// states the numbers in words (series mean/min/max, every segment and bar), referenced by
// aria-labelledby; every bar, segment and series also has a <title> tooltip. All text is escaped.
//
// Pure; any thread.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace gpuwise::advisor {

enum class AxisFormat { Percent, Bytes, Number };

// A chart value as people read it: "42.0%", "1.50 GB", "1234".
std::string formatAxisValue(double value, AxisFormat format);

struct LineSeries {
  std::string label;
  std::string color;          // CSS colour, e.g. "#3a6fd8"
  std::vector<double> values; // one per bucket, spread evenly over the time axis; NaN: no value
  bool fill = false;          // shade the area under the line
  bool dashed = false;
};

struct LineChartSpec {
  std::string id; // unique in the page: prefix of the chart's element ids
  std::string title, description;
  // The time axis, seconds; labels are relative to x_start ("0 s" at the left edge).
  double x_start = 0.0, x_end = 0.0;
  std::string x_label = "time since the first GPU activity";
  AxisFormat y_format = AxisFormat::Percent;
  double y_max = 0.0; // 0: from the data (and the marks)
  std::vector<LineSeries> series;
  std::vector<std::pair<double, std::string>> marks; // horizontal reference lines, labelled
  int width = 960, height = 220;
};
std::string renderLineChart(const LineChartSpec& spec);

struct Segment {
  std::string label;
  double value = 0.0;     // any unit; shares are value / total
  std::string value_text; // "1.20 s"; shown in the legend and the tooltip
  std::string color;
};

struct StackedBarSpec {
  std::string id, title, description;
  std::vector<Segment> segments; // zero and negative values are left out
  int width = 960;
};
std::string renderStackedBar(const StackedBarSpec& spec);

struct Bar {
  std::string label;      // shown, cut to fit the label column
  std::string full_label; // tooltip; empty: the label
  double value = 0.0;
  std::string value_text;
  std::string color;
};

struct BarChartSpec {
  std::string id, title, description;
  std::vector<Bar> bars; // drawn in order, longest bar = the largest value
  int width = 960, label_width = 330;
  // A vertical reference line across the bars at this value, labelled (a job's median); drawn
  // when its label is not empty.
  double marker = 0.0;
  std::string marker_label;
};
std::string renderBarChart(const BarChartSpec& spec);

// Rows of stacked bars on one scale (per-rank time by kind): one row per label, the parts in the
// order of `parts`, a legend across the top.
struct StackedRow {
  std::string label;
  std::vector<double> values; // one per part; zero, negative and NaN are left out
};
struct StackedRowsSpec {
  std::string id, title, description;
  std::vector<std::pair<std::string, std::string>> parts; // label, colour
  std::vector<StackedRow> rows;
  AxisFormat value_format = AxisFormat::Number;
  std::string unit = " s"; // after each value in tooltips and the description
  int width = 960, label_width = 120;
};
std::string renderStackedRows(const StackedRowsSpec& spec);

// The chart palette: distinguishable for common colour-vision deficiencies and in greyscale print
// order (dark to light).
namespace palette {
inline constexpr const char* kBlue = "#2f66c8";
inline constexpr const char* kOrange = "#e07b24";
inline constexpr const char* kGreen = "#2b8f55";
inline constexpr const char* kRed = "#c8413b";
inline constexpr const char* kPurple = "#7d57c1";
inline constexpr const char* kTeal = "#23949b";
inline constexpr const char* kYellow = "#c9a100";
inline constexpr const char* kGrey = "#8a93a6";
inline constexpr const char* kPink = "#c2528f";
} // namespace palette

} // namespace gpuwise::advisor
