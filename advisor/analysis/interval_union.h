// Interval arithmetic shared by the analyzers: the union of possibly overlapping [start, end)
// intervals, and the overlap of two unions. "Busy" in gpuwise always means the length of such a
// union, the definition HTA and TraceLens use, so overlapping kernels on two streams count once.
//
// Pure functions on plain values; any thread.
#pragma once

#include "profiler/model/events.h"

#include <vector>

namespace gpuwise::advisor {

struct Interval {
  model::TimeNs start = 0, end = 0;
  model::TimeNs length() const { return end - start; }
};

// True when a record's [start, end) is a usable time interval: both ends known (non-zero, the
// model's "unknown") and not reversed. Zero-length intervals are valid and add nothing.
inline bool isTimed(model::TimeNs start, model::TimeNs end) {
  return start != 0 && end != 0 && end >= start;
}

// Sorts `intervals` and merges overlapping or touching ones in place; the result is sorted and
// pairwise disjoint.
void mergeInPlace(std::vector<Interval>& intervals);

// Total length of a sorted, disjoint list (the output of mergeInPlace).
model::TimeNs totalLength(const std::vector<Interval>& merged);

// Length of the union of `intervals` (any order, overlaps allowed). Sorts a copy.
model::TimeNs unionLength(std::vector<Interval> intervals);

// Length of the intersection of two sorted, disjoint lists.
model::TimeNs overlapLength(const std::vector<Interval>& a, const std::vector<Interval>& b);

// Union of two sorted, disjoint lists, sorted and disjoint.
std::vector<Interval> unite(const std::vector<Interval>& a, const std::vector<Interval>& b);

} // namespace gpuwise::advisor
