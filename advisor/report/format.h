// Numbers for people, shared by rule texts and report sinks so the same figure reads the same
// everywhere. Any thread; allocates.
#pragma once

#include "profiler/model/events.h"

#include <cstdint>
#include <string>

namespace gpuwise::advisor {

// `value` with `significant` significant digits, never in exponent form: 1234.4 -> "1234",
// 0.01234 -> "0.0123", 12.0 -> "12.0".
std::string formatSignificant(double value, int significant = 3);
// A ratio as a percentage with one decimal: 0.1234 -> "12.3%".
std::string formatPercent(double ratio);
// Seconds with three significant digits and a unit: "1.23 s", "45.6 ms", "789 us".
std::string formatDuration(model::TimeNs ns);
// Decimal bytes: "512 B", "1.50 MB", "2.15 GB".
std::string formatBytes(uint64_t bytes);
// Energy with a unit: "812 J", "1.02 kJ", "3.40 MJ"; a kWh is 3.6 MJ.
std::string formatEnergy(double joules);

inline double toSeconds(model::TimeNs ns) {
  return static_cast<double>(ns) / 1e9;
}

} // namespace gpuwise::advisor
