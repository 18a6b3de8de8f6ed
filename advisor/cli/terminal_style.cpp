#include "advisor/cli/terminal_style.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sys/ioctl.h>
#include <unistd.h>

namespace gpuwise::advisor {

bool colourWanted(bool is_tty, const char* no_color, const char* term) {
  if (!is_tty) return false;
  if (no_color && *no_color) return false;
  return term && *term && std::strcmp(term, "dumb") != 0;
}

size_t wrapWidth(std::optional<size_t> tty_columns, const char* columns_env) {
  size_t width = kDefaultColumns;
  if (tty_columns && *tty_columns > 0) width = *tty_columns;
  if (columns_env && *columns_env) {
    char* end = nullptr;
    unsigned long long v = std::strtoull(columns_env, &end, 10);
    if (*end == '\0' && v > 0 && columns_env[0] != '-') width = size_t(std::min(v, 1ull << 20));
  }
  return std::clamp(width, kMinColumns, kMaxColumns);
}

int descriptorOf(const std::ostream& os) {
  if (&os == &std::cout) return STDOUT_FILENO;
  if (&os == &std::cerr || &os == &std::clog) return STDERR_FILENO;
  return -1;
}

TerminalStyle terminalStyleFor(int fd) {
  const bool tty = fd >= 0 && ::isatty(fd) == 1;
  std::optional<size_t> columns;
  if (tty) {
    winsize ws{};
    if (::ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) columns = ws.ws_col;
  }
  TerminalStyle style;
  style.width = wrapWidth(columns, std::getenv("COLUMNS"));
  style.colour = colourWanted(tty, std::getenv("NO_COLOR"), std::getenv("TERM"));
  return style;
}

} // namespace gpuwise::advisor
