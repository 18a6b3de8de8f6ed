#include "advisor/import/byte_source.h"

#include <isa-l/igzip_lib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gpuwise::advisor {
namespace {

constexpr size_t kInputPiece = 1u << 20;

const char* inflateErrorText(int code) {
  switch (code) {
  case ISAL_INVALID_BLOCK: return "corrupt gzip data (invalid deflate block)";
  case ISAL_INVALID_SYMBOL: return "corrupt gzip data (invalid deflate symbol)";
  case ISAL_INVALID_LOOKBACK: return "corrupt gzip data (invalid back-reference)";
  case ISAL_INVALID_WRAPPER: return "corrupt gzip header";
  case ISAL_UNSUPPORTED_METHOD: return "gzip file with an unsupported compression method";
  case ISAL_INCORRECT_CHECKSUM: return "corrupt gzip data (CRC mismatch)";
  case ISAL_NEED_DICT: return "gzip stream needs a preset dictionary";
  default: return "corrupt gzip data";
  }
}

} // namespace

struct ByteSource::Inflate {
  inflate_state state;
  std::unique_ptr<uint8_t[]> piece; // compressed input read from the file (not zeroed)
  size_t piece_size = 0;
};

ByteSource::ByteSource() = default;

ByteSource::~ByteSource() {
  if (fd_ >= 0) ::close(fd_);
}

std::unique_ptr<ByteSource> ByteSource::openFile(const std::string& path, std::string* error) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *error = std::strerror(errno);
    return nullptr;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
    *error = S_ISDIR(st.st_mode) ? "is a directory" : std::strerror(errno);
    ::close(fd);
    return nullptr;
  }
  std::unique_ptr<ByteSource> src(new ByteSource());
  src->fd_ = fd;
  src->input_size_ = static_cast<uint64_t>(st.st_size);
#ifdef POSIX_FADV_SEQUENTIAL
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
  uint8_t magic[2] = {0, 0};
  const ssize_t n = ::pread(fd, magic, 2, 0);
  src->gzip_ = n == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  if (src->gzip_) {
    src->inflate_ = std::make_unique<Inflate>();
    // No bigger than the file (+1, so the read that finds its end is a separate one): a small
    // trace does not pay for zeroing or faulting in a 1 MiB piece.
    src->inflate_->piece_size =
        size_t(std::min<uint64_t>(kInputPiece, std::max<uint64_t>(src->input_size_, 4095) + 1));
    src->inflate_->piece.reset(new uint8_t[src->inflate_->piece_size]);
    isal_inflate_init(&src->inflate_->state);
    src->inflate_->state.crc_flag = ISAL_GZIP;
  }
  return src;
}

std::unique_ptr<ByteSource> ByteSource::fromMemory(std::string_view data) {
  std::unique_ptr<ByteSource> src(new ByteSource());
  src->memory_ = data;
  src->input_size_ = data.size();
  src->gzip_ = data.size() >= 2 && uint8_t(data[0]) == 0x1f && uint8_t(data[1]) == 0x8b;
  if (src->gzip_) {
    src->inflate_ = std::make_unique<Inflate>();
    isal_inflate_init(&src->inflate_->state);
    src->inflate_->state.crc_flag = ISAL_GZIP;
  }
  return src;
}

int64_t ByteSource::read(char* dst, size_t capacity) {
  if (!error_.empty()) return -1;
  if (done_ || capacity == 0) return 0;
  const int64_t n = gzip_ ? readGzip(dst, capacity) : readPlain(dst, capacity);
  if (n > 0) output_produced_ += uint64_t(n);
  return n;
}

int64_t ByteSource::readPlain(char* dst, size_t capacity) {
  size_t total = 0;
  if (fd_ < 0) {
    const size_t n = std::min(capacity, memory_.size() - input_consumed_);
    std::memcpy(dst, memory_.data() + input_consumed_, n);
    input_consumed_ += n;
    if (input_consumed_ == memory_.size()) done_ = true;
    return int64_t(n);
  }
  while (total < capacity) {
    const ssize_t n = ::read(fd_, dst + total, capacity - total);
    if (n < 0) {
      if (errno == EINTR) continue;
      error_ = std::string("read error: ") + std::strerror(errno);
      return -1;
    }
    if (n == 0) {
      done_ = true;
      break;
    }
    total += size_t(n);
    input_consumed_ += uint64_t(n);
  }
  return int64_t(total);
}

bool ByteSource::refill() {
  auto& st = inflate_->state;
  if (fd_ < 0) {
    // Memory: hand ISA-L the rest in pieces that fit its 32-bit counter.
    const uint64_t left = memory_.size() - input_consumed_;
    const uint32_t n = uint32_t(std::min<uint64_t>(left, 1u << 30));
    st.next_in = reinterpret_cast<uint8_t*>(const_cast<char*>(memory_.data() + input_consumed_));
    st.avail_in = n;
    input_consumed_ += n;
    if (input_consumed_ == memory_.size()) input_eof_ = true;
    return true;
  }
  for (;;) {
    const ssize_t n = ::read(fd_, inflate_->piece.get(), inflate_->piece_size);
    if (n < 0) {
      if (errno == EINTR) continue;
      error_ = std::string("read error: ") + std::strerror(errno);
      return false;
    }
    if (n == 0) input_eof_ = true;
    st.next_in = inflate_->piece.get();
    st.avail_in = uint32_t(n);
    input_consumed_ += uint64_t(n);
    return true;
  }
}

bool ByteSource::startNextMember() {
  // A gzip file may hold several members back to back (`cat a.gz b.gz`), possibly followed by
  // zero padding (tape formats); anything else after the end is an error, not silently ignored.
  auto& st = inflate_->state;
  for (;;) {
    while (st.avail_in > 0 && *st.next_in == 0) {
      ++st.next_in;
      --st.avail_in;
    }
    if (st.avail_in > 0) break;
    if (input_eof_) {
      done_ = true;
      return true;
    }
    if (!refill()) return false;
  }
  if (st.avail_in >= 2 ? !(st.next_in[0] == 0x1f && st.next_in[1] == 0x8b)
                       : st.next_in[0] != 0x1f) {
    error_ = "unexpected data after the end of the gzip stream";
    return false;
  }
  uint8_t* next = st.next_in;
  const uint32_t avail = st.avail_in;
  isal_inflate_reset(&st);
  st.crc_flag = ISAL_GZIP;
  st.next_in = next;
  st.avail_in = avail;
  return true;
}

int64_t ByteSource::readGzip(char* dst, size_t capacity) {
  auto& st = inflate_->state;
  size_t total = 0;
  while (total < capacity && !done_) {
    if (st.avail_in == 0 && !input_eof_ && !refill()) return -1;
    const size_t want = std::min<size_t>(capacity - total, 1u << 30);
    st.next_out = reinterpret_cast<uint8_t*>(dst + total);
    st.avail_out = uint32_t(want);
    const uint32_t inBefore = st.avail_in;
    const int ret = isal_inflate(&st);
    const size_t produced = want - st.avail_out;
    total += produced;
    if (ret < 0) {
      error_ = inflateErrorText(ret);
      return -1;
    }
    if (st.block_state == ISAL_BLOCK_FINISH) {
      if (!startNextMember()) return -1;
      continue;
    }
    if (produced == 0 && st.avail_in == inBefore) {
      if (st.avail_in == 0 && input_eof_) {
        error_ = "truncated gzip file (the compressed stream ends early)";
        return -1;
      }
      if (st.avail_in > 0) { // no progress with input and room to write: never loop forever
        error_ = "corrupt gzip data (inflate made no progress)";
        return -1;
      }
    }
  }
  return int64_t(total);
}

} // namespace gpuwise::advisor
