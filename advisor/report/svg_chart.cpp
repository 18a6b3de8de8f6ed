#include "advisor/report/svg_chart.h"

#include "advisor/report/format.h"
#include "advisor/report/html_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace gpuwise::advisor {
namespace {

constexpr double kCharWidth = 6.6; // average width of a 12px system-ui character, for layout
constexpr const char* kAxisColor = "#9aa3b5";
constexpr const char* kGridColor = "#e4e8ef";

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string esc(const std::string& s) {
  return htmlEscape(s);
}

// The largest "nice" step (1, 2 or 5 x 10^k) giving at most `max_ticks` intervals over `range`.
double niceStep(double range, int max_ticks) {
  if (!(range > 0)) return 1.0;
  double raw = range / max_ticks;
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * mag >= raw) return m * mag;
  return 10.0 * mag;
}

// A time tick relative to the axis start, in the unit that suits the axis length `span` and with
// the decimals the step needs: "0.5 ms", "2.0 ms".
std::string timeLabel(double seconds, double step, double span) {
  struct Unit {
    double scale;
    const char* name;
  };
  Unit u = span >= 1.0    ? Unit{1.0, "s"}
           : span >= 1e-3 ? Unit{1e3, "ms"}
           : span >= 1e-6 ? Unit{1e6, "us"}
                          : Unit{1e9, "ns"};
  double scaled_step = step * u.scale;
  int decimals = scaled_step >= 1.0 ? 0 : static_cast<int>(std::ceil(-std::log10(scaled_step)));
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f %s", std::clamp(decimals, 0, 6), seconds * u.scale, u.name);
  return buf;
}

// Opening of every chart: a scalable, labelled image.
std::string open(const std::string& id, int width, int height, const std::string& title,
                 const std::string& description) {
  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" id=\"" << esc(id)
    << "\" viewBox=\"0 0 " << width << ' ' << height << "\" width=\"100%\" role=\"img\" "
    << "preserveAspectRatio=\"xMinYMin meet\" aria-labelledby=\"" << esc(id) << "-title " << esc(id)
    << "-desc\"><title id=\"" << esc(id) << "-title\">" << esc(title) << "</title><desc id=\""
    << esc(id) << "-desc\">" << esc(description) << "</desc>";
  return o.str();
}

std::string cut(const std::string& s, double width) {
  auto fits = static_cast<size_t>(std::max(4.0, width / kCharWidth));
  if (s.size() <= fits) return s;
  return s.substr(0, fits - 1) + "\xE2\x80\xA6"; // U+2026 ellipsis
}

struct Stats {
  double mean = 0, min = 0, max = 0;
  size_t count = 0;
};

Stats stats(const std::vector<double>& values) {
  Stats s;
  double sum = 0;
  for (double v : values) {
    if (!std::isfinite(v)) continue;
    s.min = s.count ? std::min(s.min, v) : v;
    s.max = s.count ? std::max(s.max, v) : v;
    sum += v;
    ++s.count;
  }
  if (s.count) s.mean = sum / static_cast<double>(s.count);
  return s;
}

// A legend row across the top of a chart: swatch and label per entry.
std::string legend(const std::vector<std::pair<std::string, std::string>>& entries, double x,
                   double y) {
  std::ostringstream o;
  for (const auto& [label, color] : entries) {
    o << "<rect x=\"" << num(x) << "\" y=\"" << num(y - 9) << "\" width=\"10\" height=\"10\" "
      << "rx=\"2\" fill=\"" << esc(color) << "\"/><text x=\"" << num(x + 14) << "\" y=\"" << num(y)
      << "\">" << esc(label) << "</text>";
    x += 14 + kCharWidth * static_cast<double>(label.size()) + 18;
  }
  return o.str();
}

// Axis ticks: whole percentages ("25%"), otherwise as the values read.
std::string tickLabel(double v, AxisFormat format) {
  if (format != AxisFormat::Percent) return formatAxisValue(v, format);
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.0f%%", v * 100.0);
  return buf;
}

} // namespace

std::string formatAxisValue(double value, AxisFormat format) {
  switch (format) {
  case AxisFormat::Percent: return formatPercent(value);
  case AxisFormat::Bytes: return formatBytes(static_cast<uint64_t>(std::max(0.0, value)));
  case AxisFormat::Number: return formatSignificant(value, 3);
  }
  return "";
}

std::string renderLineChart(const LineChartSpec& spec) {
  const double left = 64, right = 16, top = 26, bottom = 34;
  const double w = spec.width - left - right, h = spec.height - top - bottom;
  const double span = std::max(spec.x_end - spec.x_start, 0.0);

  double y_max = spec.y_max;
  if (y_max <= 0) {
    for (const auto& s : spec.series)
      y_max = std::max(y_max, stats(s.values).max);
    for (const auto& [value, label] : spec.marks)
      y_max = std::max(y_max, value);
    if (y_max <= 0) y_max = 1.0;
    double step = niceStep(y_max, 4);
    y_max = std::ceil(y_max / step) * step;
  }
  auto X = [&](double t) { return left + (span > 0 ? (t / span) * w : 0.0); };
  auto Y = [&](double v) { return top + h - std::clamp(v / y_max, 0.0, 1.05) * h; };

  std::string description = spec.description;
  for (const auto& s : spec.series) {
    auto st = stats(s.values);
    if (st.count == 0) continue;
    description += " " + s.label + ": mean " + formatAxisValue(st.mean, spec.y_format) + ", min " +
                   formatAxisValue(st.min, spec.y_format) + ", max " +
                   formatAxisValue(st.max, spec.y_format) + ".";
  }
  description += " Time axis " + timeLabel(span, niceStep(span, 5), span) + " long.";

  std::ostringstream o;
  o << open(spec.id, spec.width, spec.height, spec.title, description);
  // Grid and y labels.
  double y_step = spec.y_format == AxisFormat::Percent && y_max == 1.0 ? 0.25 : niceStep(y_max, 4);
  for (double v = 0; v <= y_max * 1.0001; v += y_step) {
    o << "<line x1=\"" << num(left) << "\" x2=\"" << num(left + w) << "\" y1=\"" << num(Y(v))
      << "\" y2=\"" << num(Y(v)) << "\" stroke=\"" << kGridColor << "\"/>"
      << "<text x=\"" << num(left - 6) << "\" y=\"" << num(Y(v) + 4) << "\" text-anchor=\"end\">"
      << esc(tickLabel(v, spec.y_format)) << "</text>";
  }
  // X ticks.
  double x_step = niceStep(span, 6);
  for (double t = 0; span > 0 && t <= span * 1.0001; t += x_step) {
    o << "<line x1=\"" << num(X(t)) << "\" x2=\"" << num(X(t)) << "\" y1=\"" << num(top + h)
      << "\" y2=\"" << num(top + h + 4) << "\" stroke=\"" << kAxisColor << "\"/>"
      << "<text x=\"" << num(X(t)) << "\" y=\"" << num(top + h + 16) << "\" text-anchor=\"middle\">"
      << esc(timeLabel(t, x_step, span)) << "</text>";
  }
  o << "<text x=\"" << num(left + w) << "\" y=\"" << num(top + h + 30)
    << "\" text-anchor=\"end\" class=\"axis-label\">" << esc(spec.x_label) << "</text>";
  o << "<line x1=\"" << num(left) << "\" x2=\"" << num(left + w) << "\" y1=\"" << num(top + h)
    << "\" y2=\"" << num(top + h) << "\" stroke=\"" << kAxisColor << "\"/>";

  // Series as steps: each bucket is a flat segment over its interval; NaN breaks the line.
  for (const auto& s : spec.series) {
    size_t n = s.values.size();
    if (n == 0) continue;
    auto edge = [&](size_t i) { return X(span * static_cast<double>(i) / static_cast<double>(n)); };
    std::string line, area;
    bool open_run = false;
    double run_start = 0;
    for (size_t i = 0; i <= n; ++i) {
      bool has = i < n && std::isfinite(s.values[i]);
      if (!has) {
        if (open_run) {
          area += "V" + num(Y(0)) + "H" + num(run_start) + "Z";
          open_run = false;
        }
        continue;
      }
      double y = Y(s.values[i]);
      if (!open_run) {
        run_start = edge(i);
        line += "M" + num(edge(i)) + " " + num(y);
        area += "M" + num(edge(i)) + " " + num(Y(0)) + "V" + num(y);
        open_run = true;
      } else {
        line += "V" + num(y);
        area += "V" + num(y);
      }
      line += "H" + num(edge(i + 1));
      area += "H" + num(edge(i + 1));
    }
    o << "<g class=\"series\"><title>" << esc(s.label) << "</title>";
    if (s.fill)
      o << "<path d=\"" << area << "\" fill=\"" << esc(s.color) << "\" fill-opacity=\"0.28\"/>";
    o << "<path d=\"" << line << "\" fill=\"none\" stroke=\"" << esc(s.color)
      << "\" stroke-width=\"1.6\"" << (s.dashed ? " stroke-dasharray=\"5 3\"" : "") << "/></g>";
  }
  for (const auto& [value, label] : spec.marks) {
    o << "<line x1=\"" << num(left) << "\" x2=\"" << num(left + w) << "\" y1=\"" << num(Y(value))
      << "\" y2=\"" << num(Y(value)) << "\" stroke=\"" << palette::kRed
      << "\" stroke-dasharray=\"6 4\"/><text x=\"" << num(left + w - 4) << "\" y=\""
      << num(Y(value) - 4) << "\" text-anchor=\"end\" class=\"mark\">" << esc(label) << "</text>";
  }
  std::vector<std::pair<std::string, std::string>> entries;
  for (const auto& s : spec.series)
    entries.emplace_back(s.label, s.color);
  o << legend(entries, left, 14) << "</svg>";
  return o.str();
}

std::string renderStackedBar(const StackedBarSpec& spec) {
  std::vector<const Segment*> shown;
  double total = 0;
  for (const auto& s : spec.segments) {
    if (s.value > 0 && std::isfinite(s.value)) {
      shown.push_back(&s);
      total += s.value;
    }
  }
  const double left = 4, bar_top = 4, bar_h = 30, row_h = 20;
  const double w = spec.width - 2 * left;
  // Legend: two columns under the bar.
  size_t rows = (shown.size() + 1) / 2;
  int height = static_cast<int>(bar_top + bar_h + 14 + row_h * static_cast<double>(rows) + 4);

  std::string description = spec.description;
  for (const auto* s : shown)
    description +=
        " " + s->label + ": " + s->value_text + " (" + formatPercent(s->value / total) + ").";
  if (shown.empty()) description += " Nothing to show.";

  std::ostringstream o;
  o << open(spec.id, spec.width, height, spec.title, description);
  o << "<rect x=\"" << num(left) << "\" y=\"" << num(bar_top) << "\" width=\"" << num(w)
    << "\" height=\"" << num(bar_h) << "\" fill=\"#f1f3f7\" rx=\"3\"/>";
  double x = left;
  for (const auto* s : shown) {
    double sw = w * s->value / total;
    std::string share = formatPercent(s->value / total);
    o << "<g><title>" << esc(s->label + ": " + s->value_text + " (" + share + ")") << "</title>"
      << "<rect x=\"" << num(x) << "\" y=\"" << num(bar_top) << "\" width=\"" << num(sw)
      << "\" height=\"" << num(bar_h) << "\" fill=\"" << esc(s->color) << "\"/>";
    std::string inside = s->label + " " + share;
    if (kCharWidth * static_cast<double>(inside.size()) + 10 < sw) {
      o << "<text x=\"" << num(x + 6) << "\" y=\"" << num(bar_top + bar_h / 2 + 4)
        << "\" class=\"on-bar\">" << esc(inside) << "</text>";
    } else if (kCharWidth * static_cast<double>(share.size()) + 8 < sw) {
      o << "<text x=\"" << num(x + 4) << "\" y=\"" << num(bar_top + bar_h / 2 + 4)
        << "\" class=\"on-bar\">" << esc(share) << "</text>";
    }
    o << "</g>";
    x += sw;
  }
  for (size_t i = 0; i < shown.size(); ++i) {
    double lx = left + (i % 2 == 0 ? 0.0 : w / 2);
    double ly = bar_top + bar_h + 14 + row_h * static_cast<double>(i / 2) + 4;
    const auto* s = shown[i];
    o << "<rect x=\"" << num(lx) << "\" y=\"" << num(ly - 9) << "\" width=\"10\" height=\"10\" "
      << "rx=\"2\" fill=\"" << esc(s->color) << "\"/><text x=\"" << num(lx + 14) << "\" y=\""
      << num(ly) << "\">"
      << esc(s->label + ": " + s->value_text + " (" + formatPercent(s->value / total) + ")")
      << "</text>";
  }
  o << "</svg>";
  return o.str();
}

std::string renderBarChart(const BarChartSpec& spec) {
  const double top = 4, row_h = 24, bar_h = 16, value_w = 150;
  const double label_w = spec.label_width;
  const double w = spec.width - label_w - value_w - 12;
  double max = 0;
  for (const auto& b : spec.bars)
    if (std::isfinite(b.value)) max = std::max(max, b.value);
  int height = static_cast<int>(top * 2 + row_h * static_cast<double>(spec.bars.size()));

  std::string description = spec.description;
  for (const auto& b : spec.bars)
    description +=
        " " + (b.full_label.empty() ? b.label : b.full_label) + ": " + b.value_text + ".";
  if (!spec.marker_label.empty()) description += " Dashed line: " + spec.marker_label + ".";

  std::ostringstream o;
  o << open(spec.id, spec.width, std::max(height, 1), spec.title, description);
  double y = top;
  for (const auto& b : spec.bars) {
    double bw = max > 0 && std::isfinite(b.value) ? std::max(1.0, w * b.value / max) : 0.0;
    const std::string& tip = b.full_label.empty() ? b.label : b.full_label;
    o << "<g><title>" << esc(tip + ": " + b.value_text) << "</title>"
      << "<text x=\"" << num(label_w - 8) << "\" y=\"" << num(y + bar_h - 3)
      << "\" text-anchor=\"end\" class=\"bar-label\">" << esc(cut(b.label, label_w - 12))
      << "</text><rect x=\"" << num(label_w) << "\" y=\"" << num(y) << "\" width=\"" << num(bw)
      << "\" height=\"" << num(bar_h) << "\" rx=\"2\" fill=\"" << esc(b.color) << "\"/>"
      << "<text x=\"" << num(label_w + bw + 6) << "\" y=\"" << num(y + bar_h - 3) << "\">"
      << esc(b.value_text) << "</text></g>";
    y += row_h;
  }
  if (!spec.marker_label.empty() && max > 0 && std::isfinite(spec.marker)) {
    const double mx = label_w + w * std::min(spec.marker, max) / max;
    o << "<g><title>" << esc(spec.marker_label) << "</title><line x1=\"" << num(mx)
      << "\" y1=\"0\" x2=\"" << num(mx) << "\" y2=\"" << num(std::max(height, 1))
      << "\" stroke=\"#333\" stroke-width=\"1.5\" stroke-dasharray=\"4 3\"/></g>";
  }
  o << "</svg>";
  return o.str();
}

std::string renderStackedRows(const StackedRowsSpec& spec) {
  const double top = 26, row_h = 22, bar_h = 16, value_w = 90;
  const double label_w = spec.label_width;
  const double w = spec.width - label_w - value_w - 12;
  auto finite = [](double v) { return std::isfinite(v) && v > 0 ? v : 0.0; };
  double max = 0;
  for (const auto& r : spec.rows) {
    double total = 0;
    for (double v : r.values)
      total += finite(v);
    max = std::max(max, total);
  }
  const int height = static_cast<int>(top + row_h * static_cast<double>(spec.rows.size()) + 4);
  auto text = [&](double v) { return formatAxisValue(v, spec.value_format) + spec.unit; };
  std::string description = spec.description;
  for (const auto& r : spec.rows) {
    description += " " + r.label + ":";
    for (size_t i = 0; i < spec.parts.size() && i < r.values.size(); ++i)
      description += (i ? ", " : " ") + spec.parts[i].first + " " + text(finite(r.values[i]));
    description += ".";
  }
  std::ostringstream o;
  o << open(spec.id, spec.width, height, spec.title, description);
  o << legend(spec.parts, label_w, 14);
  double y = top;
  for (const auto& r : spec.rows) {
    o << "<text x=\"" << num(label_w - 8) << "\" y=\"" << num(y + bar_h - 3)
      << "\" text-anchor=\"end\" class=\"bar-label\">" << esc(cut(r.label, label_w - 12))
      << "</text>";
    double x = label_w, total = 0;
    for (size_t i = 0; i < spec.parts.size() && i < r.values.size(); ++i) {
      const double v = finite(r.values[i]);
      if (v <= 0 || max <= 0) continue;
      const double sw = w * v / max;
      o << "<g><title>" << esc(r.label + ", " + spec.parts[i].first + ": " + text(v))
        << "</title><rect x=\"" << num(x) << "\" y=\"" << num(y) << "\" width=\"" << num(sw)
        << "\" height=\"" << num(bar_h) << "\" fill=\"" << esc(spec.parts[i].second) << "\"/></g>";
      x += sw;
      total += v;
    }
    o << "<text x=\"" << num(x + 6) << "\" y=\"" << num(y + bar_h - 3) << "\">" << esc(text(total))
      << "</text>";
    y += row_h;
  }
  o << "</svg>";
  return o.str();
}

} // namespace gpuwise::advisor
