#include "transport/gwt_file.h"

#include "transport/codec.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

namespace gpuwise::transport {
namespace {

std::string sysError(const std::string& path, const char* what) {
  return path + ": " + what + ": " + std::strerror(errno);
}

} // namespace

GwtWriter::GwtWriter(std::FILE* f) : file_(f) {}

GwtWriter::~GwtWriter() {
  if (file_) std::fclose(file_);
}

Expected<std::unique_ptr<GwtWriter>> GwtWriter::create(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return unexpected(sysError(path, "cannot create"));
  if (std::fwrite(kGwtMagic, 1, sizeof kGwtMagic, f) != sizeof kGwtMagic) {
    auto error = unexpected(sysError(path, "cannot write"));
    std::fclose(f);
    return error;
  }
  return std::unique_ptr<GwtWriter>(new GwtWriter(f));
}

bool GwtWriter::append(std::span<const uint8_t> message) {
  if (!file_ || message.size() > kMaxMessageBytes) return false;
  const auto n = static_cast<uint32_t>(message.size());
  const uint8_t len[4] = {uint8_t(n), uint8_t(n >> 8), uint8_t(n >> 16), uint8_t(n >> 24)};
  return std::fwrite(len, 1, 4, file_) == 4 &&
         std::fwrite(message.data(), 1, message.size(), file_) == message.size();
}

bool GwtWriter::close() {
  if (!file_) return false;
  const bool ok = std::fflush(file_) == 0 && !std::ferror(file_);
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  return ok && closed;
}

namespace {

// The records after the magic, from `read(dst, n)` (returns the bytes read, fewer only at the end
// or on an error, which `failed()` tells). One reader for files and for bytes in memory.
template <typename Read, typename Failed>
Status readRecords(const std::string& name, Read read, Failed failed,
                   const std::function<void(std::span<const uint8_t>)>& onMessage) {
  auto fail = [](std::string msg) -> Status { return unexpected(std::move(msg)); };
  char magic[sizeof kGwtMagic];
  if (read(magic, sizeof magic) != sizeof magic ||
      std::memcmp(magic, kGwtMagic, sizeof magic) != 0) {
    if (failed()) return fail(sysError(name, "read error at offset 0"));
    return fail(name + ": not a gpuwise trace (.gwt): bad magic at offset 0");
  }
  uint64_t offset = sizeof magic;
  std::vector<uint8_t> buf;
  for (;;) {
    uint8_t len[4];
    const size_t got = read(len, 4);
    if (failed())
      return fail(sysError(name, ("read error at offset " + std::to_string(offset)).c_str()));
    if (got == 0) return {};
    if (got != 4)
      return fail(name + ": truncated record header at offset " + std::to_string(offset));
    const uint32_t n =
        uint32_t(len[0]) | uint32_t(len[1]) << 8 | uint32_t(len[2]) << 16 | uint32_t(len[3]) << 24;
    if (n > kMaxMessageBytes)
      return fail(name + ": record of " + std::to_string(n) + " bytes at offset " +
                  std::to_string(offset) + " exceeds the message limit (corrupt file?)");
    buf.resize(n);
    if (read(buf.data(), n) != n)
      return fail(name + ": truncated record at offset " + std::to_string(offset) + " (" +
                  std::to_string(n) + " bytes expected)");
    onMessage({buf.data(), n});
    offset += 4 + uint64_t{n};
  }
}

} // namespace

Status readGwt(const std::string& path,
               const std::function<void(std::span<const uint8_t>)>& onMessage) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return unexpected(sysError(path, "cannot open"));
  struct Closer {
    std::FILE* f;
    ~Closer() { std::fclose(f); }
  } closer{f};
  return readRecords(
      path, [&](void* dst, size_t n) { return std::fread(dst, 1, n, f); },
      [&] { return std::ferror(f) != 0; }, onMessage);
}

Status readGwtBytes(std::span<const uint8_t> bytes, const std::string& name,
                    const std::function<void(std::span<const uint8_t>)>& onMessage) {
  size_t at = 0;
  return readRecords(
      name,
      [&](void* dst, size_t n) {
        n = std::min(n, bytes.size() - at);
        if (n) std::memcpy(dst, bytes.data() + at, n);
        at += n;
        return n;
      },
      [] { return false; }, onMessage);
}

bool looksLikeGwt(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return false;
  char magic[sizeof kGwtMagic];
  const bool ok = std::fread(magic, 1, sizeof magic, f) == sizeof magic &&
                  std::memcmp(magic, kGwtMagic, sizeof magic) == 0;
  std::fclose(f);
  return ok;
}

} // namespace gpuwise::transport
