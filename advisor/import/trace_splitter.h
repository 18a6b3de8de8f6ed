// Cuts a Chrome-trace JSON stream into batches of whole events without building a DOM.
//
// A Kineto trace is `{ ...metadata..., "traceEvents": [ {event}, {event}, ... ], ...metadata... }`
// (Chrome's bare-array form `[ {event}, ... ]` is accepted too). The splitter scans the inflated
// bytes 64 at a time with SIMD (the string/escape masks simdjson's stage 1 uses, AVX2 when the CPU
// has it, a scalar twin otherwise), tracks bracket depth outside strings, and reports:
//   - where the traceEvents array starts, where each event ends, where the array ends;
//   - the metadata text: the whole top-level object with the traceEvents array replaced by
//     `null`, accumulated in meta() for a small DOM parse at the end;
//   - a one-line error for anything that is not a Chrome trace: empty input, not JSON, a top-level
//     array of arrays (the PyTorch memory timeline), an object with `nodes` (the PyTorch execution
//     trace), event elements that are not objects, truncation, data after the document.
//
// The splitter owns no buffer: the chunker (trace_chunker.h) owns them and moves the unfinished
// tail of one buffer to the next, telling the splitter with rebase(). Single-threaded.
#pragma once

#include "advisor/import/event_prefilter.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gpuwise::advisor {

class TraceSplitter {
public:
  static constexpr size_t npos = ~size_t{0};

  enum class Mode { Start, Meta, Events, Done };

  TraceSplitter();

  // Scans buf[scanPos(), avail). Only whole 64-byte blocks are scanned unless `final` (the stream
  // ended at `avail`). Returns false with error() set on input that is not a Chrome trace.
  // `buf` must have 64 readable bytes past `avail`.
  bool scan(const char* buf, size_t avail, bool final);

  // Positions in the current buffer, updated by scan().
  size_t scanPos() const { return scan_pos_; }
  Mode mode() const { return mode_; }
  // The '[' opening the current batch (the traceEvents '[' or the one the chunker wrote at 0).
  size_t batchBegin() const { return batch_begin_; }
  // One past the '}' of the last complete event in the current buffer, npos if none yet.
  size_t lastBoundary() const { return last_boundary_; }
  // One past the ']' closing traceEvents when it is in the current buffer, npos otherwise.
  size_t eventsEnd() const { return events_end_; }
  bool sawEvents() const { return saw_events_; }
  // The whole events of the current buffer's batch so far, in order.
  const std::vector<EventSpan>& events() const { return events_; }

  // The chunker copied buf[from, ...) to a new buffer at `to` (bytes [from, from+skipped) dropped:
  // separators between events). Batch positions reset; when events continue, the new batch's '['
  // is at `batch_begin` (npos when the events array already ended).
  void rebase(size_t from, size_t skipped, size_t to, size_t batch_begin);

  // Offset of the current buffer's byte 0 in the inflated stream, for error messages.
  uint64_t streamOffset() const { return stream_offset_; }

  std::string& meta() { return meta_; }
  const std::string& error() const { return error_; }

  // Selects the scalar block scanner even where AVX2 exists (tests compare the two).
  void forceScalar(bool on) { force_scalar_ = on; }

private:
  bool onStructural(const char* buf, size_t pos, char c);
  bool checkFirstElement(const char* buf, size_t avail, bool final);
  bool checkTrailing(const char* buf, size_t from, size_t avail);
  void flushMeta(const char* buf, size_t upto);
  bool fail(std::string message, size_t pos);

  uint64_t prev_in_string_ = 0; // all ones when the previous block ended inside a string
  uint64_t prev_odd_backslash_ = 0;
  size_t scan_pos_ = 0;
  uint64_t stream_offset_ = 0;
  Mode mode_ = Mode::Start;
  int depth_ = 0;
  int events_depth_ = 0; // depth just inside the events array
  bool top_level_array_ = false;
  bool saw_events_ = false;
  size_t meta_from_ = 0;
  size_t batch_begin_ = npos;
  size_t last_boundary_ = npos;
  size_t events_end_ = npos;
  size_t first_element_from_ = npos; // pending check of the first byte inside the events array
  size_t event_start_ = npos;        // '{' of the event being scanned
  std::vector<EventSpan> events_;
  bool force_scalar_ = false;
  std::string meta_;
  std::string error_;
};

} // namespace gpuwise::advisor
