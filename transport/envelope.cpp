#include "transport/envelope.h"

#include "transport/schema/gpuwise_generated.h"

#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <string>

namespace gpuwise::transport {
namespace {

// Largest zstd window a decoder accepts: our frames are decoded in one call into a buffer of
// their stated size, so the window never needs to exceed kMaxDecodedBytes.
constexpr int kMaxWindowLog = 27;
static_assert((size_t{1} << kMaxWindowLog) >= kMaxDecodedBytes);

void putU16(uint8_t* p, uint16_t v) {
  p[0] = uint8_t(v);
  p[1] = uint8_t(v >> 8);
}
void putU32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    p[i] = uint8_t(v >> (8 * i));
}
uint16_t getU16(const uint8_t* p) {
  return uint16_t(p[0] | (p[1] << 8));
}
uint32_t getU32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

uint32_t envelopeCrc(const uint8_t* header, std::span<const uint8_t> payload) {
  uLong crc = crc32(0L, Z_NULL, 0);
  crc = crc32(crc, header, 16);
  // zlib takes uInt lengths; payloads are bounded by kMaxMessageBytes, far below 4 GiB.
  if (!payload.empty()) crc = crc32(crc, payload.data(), static_cast<uInt>(payload.size()));
  return static_cast<uint32_t>(crc);
}

void writeHeader(uint8_t* out, Codec codec, uint32_t decoded_size, std::span<const uint8_t> payload,
                 uint16_t version = kProtocolVersion) {
  std::memcpy(out, kEnvelopeMagic, 4);
  putU16(out + 4, version);
  out[6] = static_cast<uint8_t>(codec);
  out[7] = 0;
  putU32(out + 8, decoded_size);
  putU32(out + 12, static_cast<uint32_t>(payload.size()));
  putU32(out + 16, envelopeCrc(out, payload));
  putU32(out + 20, 0);
}

DecodeError error(DecodeError::Kind kind, std::string detail) {
  return DecodeError{kind, std::move(detail)};
}

} // namespace

EnvelopeWriter::EnvelopeWriter(int zstd_level) : level_(zstd_level) {
  cctx_ = ZSTD_createCCtx();
  if (cctx_) {
    ZSTD_CCtx_setParameter(cctx_, ZSTD_c_compressionLevel, level_);
    ZSTD_CCtx_setParameter(cctx_, ZSTD_c_contentSizeFlag, 1);
    ZSTD_CCtx_setParameter(cctx_, ZSTD_c_checksumFlag, 0); // the envelope crc covers it
    ZSTD_CCtx_setParameter(cctx_, ZSTD_c_windowLog, 0);    // default for the level, <= 2^27
  }
}

EnvelopeWriter::~EnvelopeWriter() {
  ZSTD_freeCCtx(cctx_);
}

std::vector<uint8_t> EnvelopeWriter::seal(std::span<const uint8_t> flatbuffer, uint16_t version) {
  std::vector<uint8_t> out;
  if (flatbuffer.size() > kMaxDecodedBytes) return out;
  try {
    const size_t bound = ZSTD_compressBound(flatbuffer.size());
    out.resize(kEnvelopeHeaderBytes + std::max(bound, flatbuffer.size()));
  } catch (const std::bad_alloc&) {
    return {};
  }
  uint8_t* payload = out.data() + kEnvelopeHeaderBytes;
  Codec codec = Codec::None;
  size_t payload_size = flatbuffer.size();
  if (cctx_ && flatbuffer.size() >= 64) {
    size_t n = ZSTD_compress2(cctx_, payload, out.size() - kEnvelopeHeaderBytes, flatbuffer.data(),
                              flatbuffer.size());
    if (!ZSTD_isError(n) && n < flatbuffer.size()) {
      codec = Codec::Zstd;
      payload_size = n;
    }
  }
  if (codec == Codec::None) std::memcpy(payload, flatbuffer.data(), flatbuffer.size());
  out.resize(kEnvelopeHeaderBytes + payload_size);
  if (out.size() > kMaxMessageBytes) return {};
  writeHeader(out.data(), codec, static_cast<uint32_t>(flatbuffer.size()), {payload, payload_size},
              version);
  return out;
}

EnvelopeReader::EnvelopeReader() {
  dctx_ = ZSTD_createDCtx();
  if (dctx_) ZSTD_DCtx_setParameter(dctx_, ZSTD_d_windowLogMax, kMaxWindowLog);
}

EnvelopeReader::~EnvelopeReader() {
  ZSTD_freeDCtx(dctx_);
}

bool EnvelopeReader::reserveScratch(size_t bytes) {
  // One hostile or huge message must not pin tens of MiB for the decoder's lifetime.
  if (scratch_.capacity() > (size_t{1} << 20) && scratch_.capacity() > 4 * bytes)
    std::vector<uint8_t>().swap(scratch_);
  try {
    scratch_.resize(bytes);
  } catch (const std::bad_alloc&) {
    return false;
  }
  return true;
}

std::variant<const wire::Message*, DecodeError>
EnvelopeReader::open(std::span<const uint8_t> message) {
  using K = DecodeError::Kind;
  if (message.size() > kMaxMessageBytes)
    return error(K::TooLarge, "message of " + std::to_string(message.size()) +
                                  " bytes exceeds the limit of " +
                                  std::to_string(kMaxMessageBytes));
  if (message.size() < kEnvelopeHeaderBytes)
    return error(K::BadEnvelope, "message of " + std::to_string(message.size()) +
                                     " bytes is shorter than the envelope header");
  const uint8_t* h = message.data();
  if (std::memcmp(h, kEnvelopeMagic, 4) != 0)
    return error(K::BadEnvelope, "not a gpuwise message (bad magic)");
  const uint16_t version = getU16(h + 4);
  if (version < kMinProtocolVersion || version > kProtocolVersion)
    return error(K::UnsupportedVersion, "protocol version " + std::to_string(version) +
                                            ", this build speaks " +
                                            std::to_string(kMinProtocolVersion) + " to " +
                                            std::to_string(kProtocolVersion));
  const uint8_t codec = h[6];
  if (codec > static_cast<uint8_t>(Codec::Zstd) || h[7] != 0 || getU32(h + 20) != 0)
    return error(K::BadEnvelope,
                 "unknown codec " + std::to_string(codec) + " or reserved bits set");
  const uint32_t decoded_size = getU32(h + 8);
  const uint32_t payload_size = getU32(h + 12);
  std::span<const uint8_t> payload = message.subspan(kEnvelopeHeaderBytes);
  if (payload_size != payload.size())
    return error(K::BadEnvelope, "payload is " + std::to_string(payload.size()) +
                                     " bytes, the envelope says " + std::to_string(payload_size) +
                                     " (truncated?)");
  if (decoded_size > kMaxDecodedBytes)
    return error(K::TooLarge, "decoded size " + std::to_string(decoded_size) +
                                  " exceeds the limit of " + std::to_string(kMaxDecodedBytes));
  if (codec == static_cast<uint8_t>(Codec::None) && decoded_size != payload_size)
    return error(K::BadEnvelope, "uncompressed payload size differs from the decoded size");
  if (getU32(h + 16) != envelopeCrc(h, payload)) return error(K::BadEnvelope, "checksum mismatch");

  std::span<const uint8_t> fb;
  if (codec == static_cast<uint8_t>(Codec::Zstd)) {
    if (!dctx_) return error(K::BadCompression, "no zstd decompression context");
    const unsigned long long stated = ZSTD_getFrameContentSize(payload.data(), payload.size());
    if (stated == ZSTD_CONTENTSIZE_ERROR || stated == ZSTD_CONTENTSIZE_UNKNOWN)
      return error(K::BadCompression, "zstd frame without a readable content size");
    if (stated != decoded_size)
      return error(K::BadCompression, "zstd frame content size " + std::to_string(stated) +
                                          " differs from the envelope's " +
                                          std::to_string(decoded_size));
    if (!reserveScratch(decoded_size))
      return error(K::TooLarge, "cannot allocate the decoded size");
    const size_t n = ZSTD_decompressDCtx(dctx_, scratch_.data(), scratch_.size(), payload.data(),
                                         payload.size());
    if (ZSTD_isError(n))
      return error(K::BadCompression, std::string("zstd: ") + ZSTD_getErrorName(n));
    if (n != decoded_size)
      return error(K::BadCompression, "zstd frame decoded to a different size");
    fb = {scratch_.data(), n};
  } else if (reinterpret_cast<uintptr_t>(payload.data()) % 8 != 0) {
    // FlatBuffers reads 8-byte fields in place: realign a payload from an odd address.
    if (!reserveScratch(payload.size()))
      return error(K::TooLarge, "cannot allocate the payload size");
    std::memcpy(scratch_.data(), payload.data(), payload.size());
    fb = {scratch_.data(), scratch_.size()};
  } else {
    fb = payload;
  }

  flatbuffers::Verifier verifier(fb.data(), fb.size(), /*max_depth=*/16, /*max_tables=*/1u << 20);
  if (!wire::VerifyMessageBuffer(verifier))
    return error(K::Malformed, "payload is not a valid gpuwise FlatBuffer (verifier failed)");
  const wire::Message* m = wire::GetMessage(fb.data());
  if (m->protocol_version() != version)
    return error(K::UnsupportedVersion, "message body speaks protocol version " +
                                            std::to_string(m->protocol_version()) +
                                            ", its envelope " + std::to_string(version));
  return m;
}

std::vector<uint8_t> forgeEnvelope(Codec codec, uint32_t decoded_size,
                                   std::span<const uint8_t> payload, uint16_t version) {
  std::vector<uint8_t> out(kEnvelopeHeaderBytes + payload.size());
  if (!payload.empty())
    std::memcpy(out.data() + kEnvelopeHeaderBytes, payload.data(), payload.size());
  writeHeader(out.data(), static_cast<Codec>(codec), decoded_size,
              {out.data() + kEnvelopeHeaderBytes, payload.size()}, version);
  return out;
}

} // namespace gpuwise::transport
