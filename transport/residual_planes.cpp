#include "transport/residual_planes.h"

#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <memory>

namespace gpuwise::transport {
namespace {

// Level 1: each plane is 1 byte per kernel, so this is about a sixteenth of a batch's bytes per
// call; the literal tables, not the match search, are what the planes gain from.
constexpr int kPlaneZstdLevel = 1;

void putU32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    p[i] = static_cast<uint8_t>(v >> (8 * i));
}
uint32_t getU32(const uint8_t* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

struct DctxFree {
  void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
};

} // namespace

ResidualPlaneWriter::ResidualPlaneWriter() : cctx_(ZSTD_createCCtx()) {}
ResidualPlaneWriter::~ResidualPlaneWriter() {
  ZSTD_freeCCtx(cctx_);
}

void ResidualPlaneWriter::pack(const uint8_t* planes, size_t rows, std::vector<uint8_t>& out) {
  const size_t bound = ZSTD_compressBound(rows);
  out.resize(kPlaneHeaderBytes + kResidualPlanes * std::max(bound, rows));
  size_t at = kPlaneHeaderBytes;
  for (size_t p = 0; p < kResidualPlanes; ++p) {
    const uint8_t* plane = planes + p * rows;
    size_t n = cctx_
                   ? ZSTD_compressCCtx(cctx_, out.data() + at, bound, plane, rows, kPlaneZstdLevel)
                   : rows;
    if (ZSTD_isError(n) || n >= rows) { // raw: no context, an error, or no gain
      std::memcpy(out.data() + at, plane, rows);
      n = rows;
    }
    putU32(out.data() + 4 * p, static_cast<uint32_t>(n));
    at += n;
  }
  out.resize(at);
}

const char* unpackResidualPlanes(std::span<const uint8_t> packed, size_t rows, uint8_t* planes) {
  thread_local std::unique_ptr<ZSTD_DCtx, DctxFree> dctx(ZSTD_createDCtx());
  if (packed.size() < kPlaneHeaderBytes) return "residual planes shorter than their header";
  size_t at = kPlaneHeaderBytes;
  for (size_t p = 0; p < kResidualPlanes; ++p) {
    const size_t n = getU32(packed.data() + 4 * p);
    if (n > rows || n > packed.size() - at) return "residual plane size out of range";
    uint8_t* plane = planes + p * rows;
    if (n == rows) {
      std::memcpy(plane, packed.data() + at, rows);
    } else {
      if (!dctx) return "no zstd decompression context";
      const size_t got = ZSTD_decompressDCtx(dctx.get(), plane, rows, packed.data() + at, n);
      if (ZSTD_isError(got) || got != rows) return "residual plane does not decode to its rows";
    }
    at += n;
  }
  if (at != packed.size()) return "bytes after the residual planes";
  return nullptr;
}

} // namespace gpuwise::transport
