// The envelope around every wire message, and the checks a receiver makes before it trusts one.
//
// Layout (little-endian), 24 bytes then the payload:
//   0  magic "GWMS"
//   4  u16 protocol version (kProtocolVersion)
//   6  u8  codec: 0 = none (payload is the FlatBuffer), 1 = zstd (payload is one zstd frame that
//          states its content size)
//   7  u8  reserved, 0
//   8  u32 decoded size: bytes of the FlatBuffer after decompression
//   12 u32 payload size: bytes after the header
//   16 u32 crc32 (zlib) of bytes 0..15 and of the payload, so a flipped bit anywhere is an error
//          rather than a silently wrong timestamp
//   20 u32 reserved, 0
// The header is a multiple of 8 bytes so that an uncompressed payload in an 8-aligned buffer is
// itself aligned, as FlatBuffers needs.
//
// Order of checks (each one before anything later is read): wire size <= kMaxMessageBytes, header
// present, magic, version, codec/reserved, payload size, decoded size <= kMaxDecodedBytes, crc,
// then decompression into a buffer of exactly the decoded size, then the FlatBuffers Verifier.
//
// Threads: an EnvelopeWriter or EnvelopeReader belongs to one thread. Neither throws or blocks.
#pragma once

#include "transport/codec.h"

#include <cstddef>
#include <cstdint>
#include <span>
#include <variant>
#include <vector>

struct ZSTD_CCtx_s;
struct ZSTD_DCtx_s;

namespace gpuwise::wire {
struct Message;
}

namespace gpuwise::transport {

inline constexpr uint8_t kEnvelopeMagic[4] = {'G', 'W', 'M', 'S'};
inline constexpr size_t kEnvelopeHeaderBytes = 24;

enum class Codec : uint8_t { None = 0, Zstd = 1 };

class EnvelopeWriter {
public:
  // zstd level 1..3 keeps compression well under a microsecond per kernel event.
  explicit EnvelopeWriter(int zstd_level = 1);
  ~EnvelopeWriter();
  EnvelopeWriter(const EnvelopeWriter&) = delete;
  EnvelopeWriter& operator=(const EnvelopeWriter&) = delete;

  // Wraps a finished FlatBuffer written in protocol `version`, compressed when that is smaller.
  // Empty on an allocation or compression failure (the caller then counts the batch as dropped).
  std::vector<uint8_t> seal(std::span<const uint8_t> flatbuffer,
                            uint16_t version = kProtocolVersion);

private:
  ZSTD_CCtx_s* cctx_ = nullptr;
  int level_;
};

class EnvelopeReader {
public:
  EnvelopeReader();
  ~EnvelopeReader();
  EnvelopeReader(const EnvelopeReader&) = delete;
  EnvelopeReader& operator=(const EnvelopeReader&) = delete;

  // Checks the envelope, decompresses, runs the FlatBuffers Verifier and checks the protocol
  // version inside. On success the returned Message points either into `message` or into this
  // reader's scratch buffer, and stays valid until the next open().
  std::variant<const wire::Message*, DecodeError> open(std::span<const uint8_t> message);

private:
  bool reserveScratch(size_t bytes);
  ZSTD_DCtx_s* dctx_ = nullptr;
  std::vector<uint8_t> scratch_;
};

// Exposed for tests that forge messages: wraps arbitrary payload bytes in an envelope with a
// correct crc and payload size, claiming `decoded_size` and `version`.
std::vector<uint8_t> forgeEnvelope(Codec codec, uint32_t decoded_size,
                                   std::span<const uint8_t> payload,
                                   uint16_t version = kProtocolVersion);

} // namespace gpuwise::transport
