// Standard base64 (RFC 4648, with padding) decoded strictly, for tests that check what gpuwise or a
// tool encoded: the admission webhook's JSON Patch, Kubernetes Secret data, Chromium's screenshots.
// Strict because an encoding the API server or a browser would refuse must fail the test, not be
// read leniently: the length is a multiple of 4, every character is in the alphabet, and '=' stands
// only in the last two places. Pure functions; safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace gpuwise::test {

// The bytes `text` encodes, or nullopt when it is not strict base64 (see above).
inline std::optional<std::string> tryDecodeBase64(std::string_view text) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  if (text.size() % 4) return std::nullopt;
  std::string out;
  for (size_t i = 0; i < text.size(); i += 4) {
    uint32_t bits = 0;
    int pad = 0;
    for (size_t j = 0; j < 4; ++j) {
      const char c = text[i + j];
      if (c == '=' && i + 4 == text.size() && j >= 2) {
        ++pad;
        bits <<= 6;
        continue;
      }
      const int v = value(c);
      if (v < 0 || pad) return std::nullopt;
      bits = (bits << 6) | uint32_t(v);
    }
    out.push_back(char(bits >> 16));
    if (pad < 2) out.push_back(char(bits >> 8));
    if (pad < 1) out.push_back(char(bits));
  }
  return out;
}

// The same, throwing std::runtime_error when `text` is not strict base64.
inline std::string decodeBase64(std::string_view text) {
  auto bytes = tryDecodeBase64(text);
  if (!bytes)
    throw std::runtime_error("not strict base64 (" + std::to_string(text.size()) + " characters)");
  return std::move(*bytes);
}

} // namespace gpuwise::test
