// How a kernel's four times become four small numbers on the wire, and back.
//
// Row i of a batch's KernelColumns carries, besides its signature id, four 32-bit zigzag residuals,
// each a quantity of the row minus the signature's prediction for it:
//   host_gap     = launch_start - previous launch end (protocol 2; protocol 1: previous launch
//                  start) in the batch
//   launch       = launch_end - launch_start
//   gpu_offset   = start - ref
//   gpu_duration = end - start
// where ref = max(launch_start, end of the previous row with GPU times) when the launch is known,
// else that previous end. In a GPU-bound loop a kernel starts when the previous one ends; in a
// host-bound loop it starts shortly after its launch: either way the offset is a small, steady
// number, and subtracting the signature's prediction leaves only the loop's jitter.
//
// The prediction (protocol 2) is a running mean of the signature's earlier values in the batch:
// the first value itself, then p += (value - p) / 4 (arithmetic shift, wrapping). Against the
// previous value alone (protocol 1) a residual carries the jitter of two rows; against the running
// mean, about 1.14 rows' worth: some 0.4 bits less per field. The host gap counts from the
// previous launch's end, so it does not repeat that launch's jitter either.
//
// The state (previous launch, previous GPU end, per-signature predictions) lives for one batch
// and depends only on row contents and signature *ids*, never on signature definitions: a decoder
// that lacks a signature (lost with an earlier batch) still decodes every row's times exactly and
// only has to skip that row. All arithmetic wraps modulo 2^64, so hostile input cannot cause
// undefined behaviour and an honest encoder's residual is exact whenever it fits in 32 bits.
//
// A row that cannot be expressed (a residual outside int32, or a time pair with exactly one of its
// two times unknown) uses the Escape form: its four times travel verbatim in KernelColumns.escapes.
//
// Threads: one model per encoder or decoder, used by its owner thread only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpuwise::transport {

// The timing form of a row: key >> kSignatureIdBits.
enum class TimingForm : uint8_t {
  Full = 0,     // launch and GPU times known
  HostOnly = 1, // GPU times unknown (0, 0): interposer-only tier
  GpuOnly = 2,  // launch times unknown (0, 0)
  None = 3,     // all four unknown
  Escape = 4,   // times in the escapes vector
};
inline constexpr uint8_t kMaxTimingForm = 4;

inline constexpr uint32_t kSignatureIdBits = 24;
inline constexpr uint32_t kSignatureIdMask = (1u << kSignatureIdBits) - 1;
// Signatures per connection epoch, ids 1 .. kMaxSignatures - 1. The encoder starts a new epoch
// before a batch could overflow it.
inline constexpr uint32_t kMaxSignatures = 1u << 16;

struct KernelTimes {
  int64_t launch_start = 0, launch_end = 0, start = 0, end = 0;
  bool operator==(const KernelTimes&) const = default;
};

struct KernelResiduals {
  uint32_t host_gap = 0, launch = 0, gpu_offset = 0, gpu_duration = 0;
};

// The residual columns on the wire, byte-planed (schema/gpuwise.fbs, KernelColumns.residuals; in
// protocol 2 packed plane by plane: residual_planes.h).
inline constexpr size_t kResidualBytesPerRow = 16;
void writeResidualPlanes(const std::vector<KernelResiduals>& rows, uint8_t* out);
KernelResiduals readResidualPlanes(const uint8_t* planes, size_t rows, size_t row);

class KernelTimingModel {
public:
  // Starts a batch whose first row's anchor is `time_base`, in the timing model of `protocol`
  // (1 or 2: the message's protocol version).
  void reset(int64_t time_base, uint32_t protocol);

  // Encoder: the form and residuals of a row, and the state advanced past it. `signature` is
  // 1 .. kMaxSignatures - 1.
  TimingForm encode(uint32_t signature, const KernelTimes& t, KernelResiduals* out);
  // Decoder: the times of a row of form Full, HostOnly, GpuOnly or None, and the state advanced.
  KernelTimes decode(uint32_t signature, TimingForm form, const KernelResiduals& r);
  // Decoder: advances the state past an Escape row whose times were carried verbatim.
  void skipEscape(uint32_t signature, const KernelTimes& t);

  // The anchor an encoder uses for a batch starting with this row.
  static int64_t anchorOf(const KernelTimes& t) {
    return t.launch_start != 0 ? t.launch_start : t.start;
  }

private:
  // The signature's predictions; `host_seen` / `gpu_seen`: a value has been committed.
  struct Last {
    uint64_t gap = 0, launch = 0, offset = 0, duration = 0;
    bool host_seen = false, gpu_seen = false;
  };
  struct Derived {
    bool host = false, gpu = false;
    uint64_t gap = 0, launch = 0, offset = 0, duration = 0;
  };
  Last& last(uint32_t signature);
  Derived derive(const KernelTimes& t, bool host, bool gpu) const;
  void commit(uint32_t signature, const Derived& d, const KernelTimes& t);

  // The prediction's step after a residual `r` (the protocol's rule; see the top of this file).
  uint64_t step(uint64_t r, bool seen) const {
    return protocol2_ && seen ? static_cast<uint64_t>(static_cast<int64_t>(r) >> 2) : r;
  }

  bool protocol2_ = true;    // running-mean predictions, host gap from the previous launch end
  uint64_t prev_launch_ = 0; // previous row with launch times: its end (protocol 2) or start (1)
  uint64_t prev_end_ = 0;    // end of the previous row with GPU times
  // Indexed by signature id, grown on demand; only the entries this batch touched are reset.
  std::vector<Last> last_;
  std::vector<uint32_t> touched_;
  std::vector<uint8_t> seen_;
};

} // namespace gpuwise::transport
