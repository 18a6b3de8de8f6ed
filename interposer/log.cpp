#include "interposer/log.h"

#include <atomic>
#include <cstdarg>
#include <cstdio>

#include <unistd.h>

namespace gpuwise::interposer {

namespace {
std::atomic<LogLevel> g_level{LogLevel::Warn};
} // namespace

void setLogLevel(LogLevel level) {
  g_level.store(level, std::memory_order_relaxed);
}
LogLevel logLevel() {
  return g_level.load(std::memory_order_relaxed);
}

void logLine(LogLevel level, const char* format, ...) {
  if (level == LogLevel::Quiet || uint8_t(level) > uint8_t(logLevel())) return;
  char buf[512];
  int n = std::snprintf(buf, sizeof buf, "gpuwise[%d]: ", int(getpid()));
  if (n < 0) return;
  va_list ap;
  va_start(ap, format);
  int m = std::vsnprintf(buf + n, sizeof buf - size_t(n) - 1, format, ap);
  va_end(ap);
  if (m < 0) return;
  size_t len =
      size_t(n) + (size_t(m) < sizeof buf - size_t(n) - 1 ? size_t(m) : sizeof buf - size_t(n) - 2);
  buf[len++] = '\n';
  ssize_t ignored = write(STDERR_FILENO, buf, len);
  (void)ignored;
}

} // namespace gpuwise::interposer
