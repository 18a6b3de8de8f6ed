// Decodes batches of Chrome-trace events with simdjson On-Demand and hands each event to a sink.
//
// Most bytes of a Kineto trace are CPU operators and Python frames the analyzers never read: for
// those only the head fields are touched (category, name, pid, ts, dur) and `args` is skipped
// without being parsed. `args` are decoded only for events that map to the model.
//
// One thread (the importer's parsing thread). Throws KinetoParseError on malformed JSON; the
// importer catches it at its boundary and names the file.
#pragma once

#include "advisor/import/kineto_event.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>

namespace gpuwise::advisor {

struct KinetoParseError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class KinetoEventSink {
public:
  virtual ~KinetoEventSink() = default;
  // Whether `args` of this event are wanted (decided from the head fields seen before "args").
  virtual bool wantsArgs(const KinetoEvent& event) const = 0;
  // `args` is null when the event had none or they were not wanted.
  virtual void onEvent(const KinetoEvent& event, const KinetoArgs* args) = 0;
};

class KinetoEventParser {
public:
  KinetoEventParser();
  ~KinetoEventParser();

  // Parses `[ {event}, ... ]` at data[0, len); `capacity` readable bytes from data (>= len + 64).
  // `stream_offset` locates data[0] in the inflated file, for error messages.
  void parseBatch(const char* data, size_t len, size_t capacity, uint64_t stream_offset,
                  KinetoEventSink& sink);

  uint64_t eventsSeen() const { return events_seen_; }

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  uint64_t events_seen_ = 0;
};

} // namespace gpuwise::advisor
