// profiler/model/text_bytes.h against an oracle that decodes generically (any lead byte, any
// length) and then applies the standard's rules to the code point, over every two-byte prefix
// with continuation bytes chosen at each range edge; and FNV-1a against its published vectors.
#include "profiler/model/printable_text.h"
#include "profiler/model/record_limits.h"
#include "profiler/model/text_bytes.h"

#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

using namespace gpuwise::model;

namespace {

// 0 or the sequence length, by decoding first and judging the code point afterwards.
size_t oracleLength(std::string_view s) {
  if (s.empty()) return 0;
  const auto b0 = static_cast<unsigned char>(s[0]);
  if (b0 < 0x80) return 1;
  size_t n = (b0 & 0xE0) == 0xC0 ? 2 : (b0 & 0xF0) == 0xE0 ? 3 : (b0 & 0xF8) == 0xF0 ? 4 : 0;
  if (n == 0 || s.size() < n) return 0;
  uint32_t cp = b0 & (0x7F >> n);
  for (size_t i = 1; i < n; ++i) {
    const auto b = static_cast<unsigned char>(s[i]);
    if ((b & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3F);
  }
  const uint32_t smallest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < smallest[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

} // namespace

TEST_CASE("utf8SequenceLength agrees with a decode-then-judge oracle", "[text_bytes]") {
  const unsigned char edges[] = {0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xFF};
  size_t checked = 0;
  for (int b0 = 0; b0 < 256; ++b0)
    for (int b1 = 0; b1 < 256; ++b1)
      for (unsigned char b2 : edges)
        for (unsigned char b3 : edges)
          for (size_t len = 1; len <= 4; ++len) {
            const char bytes[4] = {char(b0), char(b1), char(b2), char(b3)};
            std::string_view s(bytes, len);
            if (utf8SequenceLength(s) != oracleLength(s)) {
              INFO("bytes " << b0 << " " << b1 << " " << int(b2) << " " << int(b3) << " length "
                            << len);
              CHECK(utf8SequenceLength(s) == oracleLength(s));
              return;
            }
            ++checked;
          }
  CHECK(checked == 256u * 256u * 11u * 11u * 4u);
  CHECK(utf8SequenceLength("") == 0);
}

TEST_CASE("fnv1a64 gives the published FNV-1a 64-bit values", "[text_bytes]") {
  CHECK(fnv1a64("") == 0xcbf29ce484222325ull);
  CHECK(fnv1a64("a") == 0xaf63dc4c8601ec8cull);
  CHECK(fnv1a64("foobar") == 0x85944171f73967e8ull);
  CHECK(fnv1a64(std::string_view("\xff\x00", 2)) != fnv1a64("\xff"));
}

TEST_CASE("printableText keeps valid UTF-8 and escapes controls, C1 controls and bad bytes",
          "[text_bytes]") {
  CHECK(printableText("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80") ==
        "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  CHECK(printableText("a\nb\x1b[0m\x7f") == "a\\x0ab\\x1b[0m\\x7f");
  CHECK(printableText("\xc2\x9b\xc2\xa0") == "\\xc2\\x9b\xc2\xa0"); // C1 CSI escaped, NBSP kept
  CHECK(printableText("\xed\xa0\x80") == "\\xed\\xa0\\x80");        // a surrogate
  CHECK(printableText("\xe2\x82") == "\\xe2\\x82");                 // truncated
  CHECK(printableText(std::string_view("\0", 1)) == "\\x00");
}

TEST_CASE("a cut name ends in the FNV-1a hash of the whole name", "[text_bytes]") {
  const std::string name(kMaxNameBytes + 100, 'k');
  std::string storage;
  std::string_view out = boundedName(name, storage);
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(fnv1a64(name)));
  CHECK(out.size() <= kMaxNameBytes);
  CHECK(std::string(out).ends_with(std::string("...#") + hex));
}
