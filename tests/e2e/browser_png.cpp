#include "tests/e2e/browser_png.h"

#include <cstdlib>
#include <stdexcept>
#include <unordered_set>
#include <zlib.h>

namespace gpuwise::advisor::test {
namespace {

uint32_t be32(std::string_view s, size_t at) {
  auto b = [&](size_t i) { return static_cast<uint32_t>(static_cast<unsigned char>(s[at + i])); };
  return b(0) << 24 | b(1) << 16 | b(2) << 8 | b(3);
}

std::string inflateAll(const std::string& data) {
  z_stream z{};
  if (inflateInit(&z) != Z_OK) throw std::runtime_error("png: inflateInit failed");
  std::string out;
  char buf[1 << 16];
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    rc = inflate(&z, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      inflateEnd(&z);
      throw std::runtime_error("png: corrupt image data");
    }
    out.append(buf, sizeof buf - z.avail_out);
  }
  inflateEnd(&z);
  return out;
}

int paeth(int a, int b, int c) {
  int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  if (pa <= pb && pa <= pc) return a;
  return pb <= pc ? b : c;
}

} // namespace

Image decodePng(std::string_view png) {
  static const char kSignature[] = "\x89PNG\r\n\x1a\n";
  if (png.size() < 8 || png.substr(0, 8) != std::string_view(kSignature, 8))
    throw std::runtime_error("not a PNG");
  Image img;
  int color_type = -1;
  std::string idat;
  for (size_t at = 8; at + 12 <= png.size();) {
    uint32_t len = be32(png, at);
    std::string_view type = png.substr(at + 4, 4);
    if (at + 12 + len > png.size()) throw std::runtime_error("png: truncated chunk");
    std::string_view body = png.substr(at + 8, len);
    if (type == "IHDR") {
      img.width = be32(body, 0);
      img.height = be32(body, 4);
      int depth = static_cast<unsigned char>(body[8]);
      color_type = static_cast<unsigned char>(body[9]);
      int interlace = static_cast<unsigned char>(body[12]);
      if (depth != 8 || (color_type != 2 && color_type != 6) || interlace != 0)
        throw std::runtime_error("png: only 8-bit RGB/RGBA, non-interlaced");
    } else if (type == "IDAT") {
      idat.append(body);
    } else if (type == "IEND") {
      break;
    }
    at += 12 + len;
  }
  if (color_type < 0 || idat.empty()) throw std::runtime_error("png: no header or no data");
  size_t bpp = color_type == 6 ? 4 : 3, stride = img.width * bpp;
  std::string raw = inflateAll(idat);
  if (raw.size() < (stride + 1) * img.height) throw std::runtime_error("png: short image data");
  std::vector<uint8_t> prev(stride, 0), cur(stride);
  img.pixels.reserve(size_t{img.width} * img.height);
  for (uint32_t y = 0; y < img.height; ++y) {
    const auto* line = reinterpret_cast<const uint8_t*>(raw.data()) + y * (stride + 1);
    int filter = line[0];
    for (size_t x = 0; x < stride; ++x) {
      int a = x >= bpp ? cur[x - bpp] : 0, b = prev[x], c = x >= bpp ? prev[x - bpp] : 0;
      int v = line[1 + x];
      switch (filter) {
      case 0: break;
      case 1: v += a; break;
      case 2: v += b; break;
      case 3: v += (a + b) / 2; break;
      case 4: v += paeth(a, b, c); break;
      default: throw std::runtime_error("png: bad filter type");
      }
      cur[x] = static_cast<uint8_t>(v);
    }
    for (size_t x = 0; x < stride; x += bpp)
      img.pixels.push_back(uint32_t{cur[x]} << 16 | uint32_t{cur[x + 1]} << 8 | cur[x + 2]);
    std::swap(prev, cur);
  }
  return img;
}

ImageStats imageStats(const Image& image) {
  ImageStats s;
  if (image.pixels.empty()) return s;
  std::unordered_set<uint32_t> colors(image.pixels.begin(), image.pixels.end());
  s.distinct_colors = colors.size();
  uint32_t background = image.pixels.front();
  size_t differ = 0;
  for (auto p : image.pixels)
    differ += p != background;
  s.content_ratio = static_cast<double>(differ) / static_cast<double>(image.pixels.size());
  return s;
}

} // namespace gpuwise::advisor::test
