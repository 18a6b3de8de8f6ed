// Drops, on the reader thread, the events the model never uses, before the parser sees them:
// CPU operators and Python frames (2/3 of a typical trace's bytes), flow arrows, and thread-name
// metadata. The decision reads only the first members of the event text, in the order every
// Kineto writer emits them ({"ph": "X", "cat": "cpu_op", "name": ...}); any event that does not
// start exactly so is kept and decoded in full, so a surprise costs speed, never correctness.
//
// Kept even though their category is skipped: operators named ProfilerStep#N or
// enumerate(DataLoader)#... (2021 traces record steps and input waits as operators), the
// record_param_comms operators (a collective's kind, size and group, joined to its kernel) and the
// Python dataloader __next__ frames (the importer's last-resort DataLoader ranges).
//
// Pure functions; any thread.
#pragma once

#include <cstddef>
#include <string_view>

namespace gpuwise::advisor {

// `event` is the text of one event object, from '{' to its matching '}'.
bool isDroppableEvent(std::string_view event, bool keep_operators);

// Rewrites buf[begin, ...) in place as `[e1,e2,...]` keeping only the events not dropped.
// `events` are [start, end) offsets of whole event objects in increasing order, all inside the
// array opened by the '[' at `begin`; `close` is the offset of the array's own ']' when it is in
// the buffer, 0 when the batch was cut after the last event. Returns the offset one past the ']'
// it writes (at most the end of the last event + 1, or `close` + 1), or 0 when anything but
// whitespace and one comma lies between events (a malformed array). `dropped` counts removals.
struct EventSpan {
  size_t start, end;
};
size_t compactEvents(char* buf, size_t begin, size_t close, const EventSpan* events, size_t count,
                     bool keep_operators, size_t* dropped);

} // namespace gpuwise::advisor
