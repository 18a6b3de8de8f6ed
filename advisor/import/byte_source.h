// The bytes of one trace file, inflated on the fly when the file is gzip (detected by its magic
// bytes, not its name). Reads straight into the caller's buffer, so a trace of any size costs a
// fixed amount of memory here: the compressed input is read in 1 MiB pieces, never mapped whole.
//
// One thread at a time (the importer's reader thread). Never throws; a read error, corrupt or
// truncated gzip data is reported by read() returning -1 with error() set to one line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace gpuwise::advisor {

class ByteSource {
public:
  // nullptr with `error` set when the file cannot be opened.
  static std::unique_ptr<ByteSource> openFile(const std::string& path, std::string* error);
  // Reads from memory the caller keeps alive (tests, in-memory traces); gzip detected the same way.
  static std::unique_ptr<ByteSource> fromMemory(std::string_view data);

  ~ByteSource();
  ByteSource(const ByteSource&) = delete;
  ByteSource& operator=(const ByteSource&) = delete;

  // Writes up to `capacity` bytes of (inflated) content to `dst`. Returns the number written, 0 at
  // the end of the content, -1 on error. Returns fewer than `capacity` only at the end.
  int64_t read(char* dst, size_t capacity);

  bool gzip() const { return gzip_; }
  uint64_t inputSize() const { return input_size_; }         // bytes of the file as stored
  uint64_t inputConsumed() const { return input_consumed_; } // of those, how many were read
  uint64_t outputProduced() const { return output_produced_; }
  const std::string& error() const { return error_; }

private:
  ByteSource();
  bool refill(); // reads the next piece of compressed input; false on a read error
  int64_t readPlain(char* dst, size_t capacity);
  int64_t readGzip(char* dst, size_t capacity);
  bool startNextMember(); // after a gzip member ends: another member, zero padding, or garbage

  int fd_ = -1;
  std::string_view memory_; // when reading from memory
  uint64_t input_size_ = 0;
  uint64_t input_consumed_ = 0;
  uint64_t output_produced_ = 0;
  bool gzip_ = false;
  bool input_eof_ = false;
  bool done_ = false;
  std::string error_;

  // Gzip only: the inflate state (ISA-L) and the compressed piece it reads from.
  struct Inflate;
  std::unique_ptr<Inflate> inflate_;
};

} // namespace gpuwise::advisor
