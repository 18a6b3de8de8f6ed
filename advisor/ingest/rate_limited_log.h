// One log line per kind of problem per interval, with the count of lines suppressed since the
// previous one, so a flood of malformed messages cannot flood the advisor's stderr.
//
// Not thread-safe: owned by the ingest thread. The clock is passed in, so tests need no sleeps.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace gpuwise::advisor {

class RateLimitedLog {
public:
  using Clock = std::chrono::steady_clock;
  using Sink = std::function<void(std::string_view line)>;

  // `sink` receives whole lines without a trailing newline; nullptr writes them to stderr.
  explicit RateLimitedLog(Sink sink = nullptr, Clock::duration interval = std::chrono::seconds(5));

  // Emits `line` unless a line of the same `kind` was emitted less than `interval` before `now`.
  // Returns whether it was emitted.
  bool log(std::string_view kind, std::string_view line, Clock::time_point now);
  uint64_t suppressed(std::string_view kind) const;

private:
  struct State {
    Clock::time_point last{};
    bool emitted = false;
    uint64_t suppressed = 0;
  };
  Sink sink_;
  Clock::duration interval_;
  std::map<std::string, State, std::less<>> kinds_;
};

} // namespace gpuwise::advisor
