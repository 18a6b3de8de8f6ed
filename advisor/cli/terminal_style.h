// How the terminal summary is drawn on the stream it goes to: colour only on a terminal, and not
// when NO_COLOR is set (https://no-color.org: present and not empty) or TERM is unset or "dumb";
// the width from the terminal (TIOCGWINSZ on the stream's fd), COLUMNS overriding it, clamped to
// [kMinColumns, kMaxColumns]; off a terminal without COLUMNS, kDefaultColumns. Files and pipes
// therefore get plain text of the fixed width, whatever the terminal the command was started in.
//
// The decisions are pure functions of their inputs (tested directly); terminalStyleFor() reads
// them from the process (isatty, ioctl, getenv). Any thread.
#pragma once

#include <cstddef>
#include <optional>
#include <ostream>

namespace gpuwise::advisor {

inline constexpr size_t kDefaultColumns = 100;
inline constexpr size_t kMinColumns = 60;
inline constexpr size_t kMaxColumns = 200;

struct TerminalStyle {
  size_t width = kDefaultColumns;
  bool colour = false;
};

// Whether to colour output going to a stream that is (`is_tty`) or is not a terminal; `no_color`
// and `term`: the variables' values, nullptr when unset.
bool colourWanted(bool is_tty, const char* no_color, const char* term);

// The width to wrap at: `columns_env` (COLUMNS; nullptr when unset) when it is a positive number,
// else the terminal's `tty_columns` (nullopt or 0 when not a terminal or unknown), else
// kDefaultColumns; clamped to [kMinColumns, kMaxColumns].
size_t wrapWidth(std::optional<size_t> tty_columns, const char* columns_env);

// The file descriptor behind `os` when it is std::cout (1) or std::cerr/std::clog (2); -1 for any
// other stream (a test's ostringstream): those get the plain, fixed-width style.
int descriptorOf(const std::ostream& os);

// The style for output written to `fd` (-1: not a terminal).
TerminalStyle terminalStyleFor(int fd);

} // namespace gpuwise::advisor
