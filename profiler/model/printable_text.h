// Text from outside (a file's bytes, a table name in an SQLite export, a kernel name from a wire
// message) made safe to print in a log or error line: control bytes (an ESC starting a terminal
// escape sequence, a newline splitting one line in two, NUL), the C1 controls U+0080..U+009F and
// bytes that are not valid UTF-8 become "\xNN"; printable ASCII and valid UTF-8 (accented file
// names) stay as they are.
//
// Header-only; any thread.
#pragma once

#include "profiler/model/text_bytes.h"

#include <string>
#include <string_view>

namespace gpuwise::model {

inline std::string printableText(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  auto escape = [&](unsigned char c) {
    out.append("\\x").push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
  };
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      out.push_back(char(c));
      ++i;
      continue;
    }
    // A well-formed UTF-8 sequence stays, except U+0080..U+009F: the C1 controls (0x9B is a CSI
    // on some terminals).
    size_t n = c < 0x80 ? 0 : utf8SequenceLength(text.substr(i));
    if (n == 2 && c == 0xc2 && static_cast<unsigned char>(text[i + 1]) < 0xa0) n = 0;
    if (n == 0) {
      escape(c);
      ++i;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

} // namespace gpuwise::model
