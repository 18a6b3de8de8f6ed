// Byte-level helpers for text from outside (names in a wire message, a trace, a Hello): where a
// valid UTF-8 sequence ends, and the 64-bit FNV-1a hash that keeps a cut or repaired string
// distinct from others that share its visible part.
//
// Header-only; any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace gpuwise::model {

// The length of the valid UTF-8 sequence at the start of `s` (1-4), or 0 when there is none: `s`
// empty, a stray continuation byte, a truncated sequence, an overlong form, a surrogate or a code
// point above U+10FFFF (the Unicode standard's table 3-7).
inline size_t utf8SequenceLength(std::string_view s) {
  if (s.empty()) return 0;
  auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char b0 = byte(0);
  if (b0 < 0x80) return 1;
  size_t length = 0;
  unsigned char min1 = 0x80, max1 = 0xBF; // the allowed range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    length = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    length = 3;
    if (b0 == 0xE0) min1 = 0xA0; // overlong
    if (b0 == 0xED) max1 = 0x9F; // surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    length = 4;
    if (b0 == 0xF0) min1 = 0x90; // overlong
    if (b0 == 0xF4) max1 = 0x8F; // above U+10FFFF
  } else {
    return 0;
  }
  if (s.size() < length) return 0;
  if (byte(1) < min1 || byte(1) > max1) return 0;
  for (size_t i = 2; i < length; ++i)
    if ((byte(i) & 0xC0) != 0x80) return 0;
  return length;
}

// 64-bit FNV-1a of the bytes of `s`: cheap, stable across runs and builds (names in reports and
// label values carry it), not for anything an attacker must not collide.
inline uint64_t fnv1a64(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;
  }
  return h;
}

} // namespace gpuwise::model
