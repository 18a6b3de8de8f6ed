// A CUPTI activity buffer for decoder tests: records laid out the way FakeCuptiPort delivers them
// (an 8-byte size header, records 8-byte aligned) and decoded with its activityGetNextRecord,
// without the collector.
#pragma once

#include "profiler/cupti/activity_decoder.h"
#include "profiler/cupti/fake_cupti_port.h"

#include <cstdint>
#include <cstring>
#include <vector>

namespace gpuwise::profiler::test {

struct RecordBuffer {
  FakeCuptiPort port;
  std::vector<uint8_t> storage = std::vector<uint8_t>(1 << 16);
  size_t used = 0;
  template <class R> void add(const R& r) {
    uint32_t len = sizeof r;
    std::memcpy(storage.data() + used, &len, 4);
    std::memcpy(storage.data() + used + 8, &r, sizeof r);
    used += 8 + ((sizeof r + 7) & ~size_t{7});
  }
  void decodeInto(ActivityDecoder& d, DecodedActivity& out, int64_t now = 0) {
    d.decode(storage.data(), used, now, out);
    used = 0;
  }
};

} // namespace gpuwise::profiler::test
