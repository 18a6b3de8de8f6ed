// The residual planes of a kernel batch packed plane by plane (protocol 2's
// KernelColumns.residual_planes), and back.
//
// Layout: 16 little-endian u32 body sizes, one per plane in the order of writeResidualPlanes
// (kernel_timing.h), then the 16 bodies in that order. A body of exactly `rows` bytes is the plane
// itself; a shorter one is one zstd frame that decodes to exactly `rows` bytes; a longer one is
// malformed.
//
// Why: the envelope compresses a whole message as one zstd frame, whose blocks (up to 128 KiB)
// share one literal table among planes of very different statistics: a low byte plane is noise,
// a high one nearly all zero. A frame per plane gives each plane its own table: most of protocol
// 2's gain on a steady loop (6.0 -> 5.5 bytes per kernel with the running-mean residuals); the
// envelope's pass then finds nothing left to take.
//
// Threads: a ResidualPlaneWriter belongs to one thread; unpackResidualPlanes may be called from any
// thread (its zstd context is per thread). Neither throws.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

struct ZSTD_CCtx_s;

namespace gpuwise::transport {

inline constexpr size_t kResidualPlanes = 16;
inline constexpr size_t kPlaneHeaderBytes = 4 * kResidualPlanes;
// Below this many rows a batch's planes travel raw (KernelColumns.residuals): a frame per plane
// costs more than it saves, and the envelope compresses the raw planes well enough.
inline constexpr size_t kMinPackedPlaneRows = 256;

class ResidualPlaneWriter {
public:
  ResidualPlaneWriter();
  ~ResidualPlaneWriter();
  ResidualPlaneWriter(const ResidualPlaneWriter&) = delete;
  ResidualPlaneWriter& operator=(const ResidualPlaneWriter&) = delete;

  // `planes`: 16 * rows bytes as writeResidualPlanes lays them out; `out` receives the packed
  // form (each plane compressed when that makes it smaller). May throw std::bad_alloc.
  void pack(const uint8_t* planes, size_t rows, std::vector<uint8_t>& out);

private:
  ZSTD_CCtx_s* cctx_ = nullptr;
};

// The packed form back into 16 * rows bytes at `planes`; null, or why it is malformed.
const char* unpackResidualPlanes(std::span<const uint8_t> packed, size_t rows, uint8_t* planes);

} // namespace gpuwise::transport
