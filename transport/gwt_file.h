// The recorded trace file (.gwt): the wire messages of a run, as they arrived, so a recorded run
// replays through the same decoder as a live one. Layout: the 8-byte magic "GWTRACE1", then
// records of [u32 little-endian length][message bytes]. `gpuwise run --trace F` writes one;
// `gpuwise report F.gwt` reads it.
#pragma once

#include "profiler/model/expected.h"

#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <span>
#include <string>

namespace gpuwise::transport {

inline constexpr char kGwtMagic[8] = {'G', 'W', 'T', 'R', 'A', 'C', 'E', '1'};

class GwtWriter {
public:
  // An error (one line naming the file) when the file cannot be created.
  static Expected<std::unique_ptr<GwtWriter>> create(const std::string& path);
  ~GwtWriter();
  bool append(std::span<const uint8_t> message); // false on a write error (disk full ...)
  bool close();                                  // flushes; false on error

private:
  explicit GwtWriter(std::FILE*);
  std::FILE* file_;
};

// Calls `onMessage` for each recorded message in order. An error (one line, naming the problem and
// the byte offset) when the file is not a .gwt file or is truncated.
Status readGwt(const std::string& path,
               const std::function<void(std::span<const uint8_t>)>& onMessage);
// The same for a recording already in memory (read from a pipe; the fuzz target), named `name`
// in errors.
Status readGwtBytes(std::span<const uint8_t> bytes, const std::string& name,
                    const std::function<void(std::span<const uint8_t>)>& onMessage);

// True when the first bytes of the file are the .gwt magic (used to pick an importer).
bool looksLikeGwt(const std::string& path);

} // namespace gpuwise::transport
