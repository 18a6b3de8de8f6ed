// Text from outside (a file's bytes, a table name in an SQLite export, a kernel name from a wire
// message) made safe to print in a log or error line: control bytes (an ESC starting a terminal
// escape sequence, a newline splitting one line in two, NUL), the C1 controls U+0080..U+009F and
// bytes that are not valid UTF-8 become "\xNN"; printable ASCII and valid UTF-8 (accented file
// names) stay as they are.
//
// Header-only; any thread.
#pragma once

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
    // The length of a well-formed UTF-8 sequence starting here (0: not one), overlong forms,
    // surrogates and code points past U+10FFFF excluded, as the Unicode standard's table 3-7.
    size_t n = 0;
    auto cont = [&](size_t k, unsigned char lo = 0x80, unsigned char hi = 0xbf) {
      if (i + k >= text.size()) return false;
      const auto b = static_cast<unsigned char>(text[i + k]);
      return b >= lo && b <= hi;
    };
    if (c >= 0xc2 && c <= 0xdf && cont(1)) {
      // U+0080..U+009F are the C1 controls (0x9B is a CSI on some terminals).
      n = c == 0xc2 && static_cast<unsigned char>(text[i + 1]) < 0xa0 ? 0 : 2;
    } else if (c == 0xe0) {
      n = cont(1, 0xa0) && cont(2) ? 3 : 0;
    } else if ((c >= 0xe1 && c <= 0xec) || c == 0xee || c == 0xef) {
      n = cont(1) && cont(2) ? 3 : 0;
    } else if (c == 0xed) {
      n = cont(1, 0x80, 0x9f) && cont(2) ? 3 : 0;
    } else if (c == 0xf0) {
      n = cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
    } else if (c >= 0xf1 && c <= 0xf3) {
      n = cont(1) && cont(2) && cont(3) ? 4 : 0;
    } else if (c == 0xf4) {
      n = cont(1, 0x80, 0x8f) && cont(2) && cont(3) ? 4 : 0;
    }
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
