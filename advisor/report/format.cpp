#include "advisor/report/format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace gpuwise::advisor {

std::string formatSignificant(double value, int significant) {
  if (!std::isfinite(value)) return "n/a";
  if (value == 0.0) return "0";
  int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(value))));
  int decimals = std::clamp(significant - 1 - magnitude, 0, 9);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  return buf;
}

std::string formatPercent(double ratio) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", ratio * 100.0);
  return buf;
}

std::string formatDuration(model::TimeNs ns) {
  double s = toSeconds(ns);
  double a = std::fabs(s);
  if (a >= 1.0 || a == 0.0) return formatSignificant(s) + " s";
  if (a >= 1e-3) return formatSignificant(s * 1e3) + " ms";
  if (a >= 1e-6) return formatSignificant(s * 1e6) + " us";
  return formatSignificant(s * 1e9) + " ns";
}

std::string formatBytes(uint64_t bytes) {
  double b = static_cast<double>(bytes);
  if (bytes < 1000) return std::to_string(bytes) + " B";
  if (b < 1e6) return formatSignificant(b / 1e3) + " kB";
  if (b < 1e9) return formatSignificant(b / 1e6) + " MB";
  if (b < 1e12) return formatSignificant(b / 1e9) + " GB";
  return formatSignificant(b / 1e12) + " TB";
}

std::string formatEnergy(double joules) {
  double a = std::fabs(joules);
  if (a < 1e3) return formatSignificant(joules) + " J";
  if (a < 1e6) return formatSignificant(joules / 1e3) + " kJ";
  if (a < 1e9) return formatSignificant(joules / 1e6) + " MJ";
  return formatSignificant(joules / 1e9) + " GJ";
}

} // namespace gpuwise::advisor
