// Just enough PNG for the browser test to judge a screenshot: decode an 8-bit RGB or RGBA,
// non-interlaced PNG (what Chromium writes) with zlib, undo the scanline filters, and count what
// the page shows: distinct colours, and the share of pixels that differ from the background (the
// top-left pixel). A blank or single-colour page has 1 colour and 0% content.
//
// Test code; any thread. Throws std::runtime_error on a PNG it cannot read.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpuwise::advisor::test {

struct Image {
  uint32_t width = 0, height = 0;
  std::vector<uint32_t> pixels; // 0xRRGGBB per pixel, row by row (alpha dropped)
};

Image decodePng(std::string_view png);

struct ImageStats {
  size_t distinct_colors = 0;
  double content_ratio = 0.0; // pixels unlike the top-left (background) pixel, 0..1
};
ImageStats imageStats(const Image& image);

} // namespace gpuwise::advisor::test
