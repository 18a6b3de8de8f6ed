#include "advisor/ingest/rate_limited_log.h"

#include <cstdio>
#include <string>

namespace gpuwise::advisor {

RateLimitedLog::RateLimitedLog(Sink sink, Clock::duration interval)
    : sink_(std::move(sink)), interval_(interval) {
  if (!sink_) {
    sink_ = [](std::string_view line) {
      std::fprintf(stderr, "%.*s\n", static_cast<int>(line.size()), line.data());
    };
  }
}

bool RateLimitedLog::log(std::string_view kind, std::string_view line, Clock::time_point now) {
  auto it = kinds_.find(kind);
  if (it == kinds_.end()) it = kinds_.emplace(std::string(kind), State{}).first;
  auto& s = it->second;
  if (s.emitted && now - s.last < interval_) {
    ++s.suppressed;
    return false;
  }
  std::string out(line);
  if (s.suppressed > 0) out += " (" + std::to_string(s.suppressed) + " similar suppressed)";
  sink_(out);
  s.last = now;
  s.emitted = true;
  s.suppressed = 0;
  return true;
}

uint64_t RateLimitedLog::suppressed(std::string_view kind) const {
  auto it = kinds_.find(kind);
  return it == kinds_.end() ? 0 : it->second.suppressed;
}

} // namespace gpuwise::advisor
