// A streaming JSON text writer: appends tokens to a buffer flushed to an ostream every 1 MiB, so
// writing a trace of any size needs no document in memory. It writes what it is told (the caller
// places commas and colons with raw()); it only guarantees correct strings and numbers.
//
// One thread. Never throws on stream failure: ok() turns false and later writes are dropped.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

namespace gpuwise::advisor {

class JsonWriter {
public:
  explicit JsonWriter(std::ostream& out);
  ~JsonWriter();
  JsonWriter(const JsonWriter&) = delete;
  JsonWriter& operator=(const JsonWriter&) = delete;

  JsonWriter& raw(std::string_view text);
  JsonWriter& raw(char c) {
    buf_.push_back(c);
    return *this;
  }
  // A quoted string with JSON escapes (quotes, backslashes, control characters).
  JsonWriter& str(std::string_view s);
  JsonWriter& num(int64_t v);
  JsonWriter& num(uint64_t v);
  JsonWriter& num(int v) { return num(int64_t(v)); }
  JsonWriter& num(uint32_t v) { return num(uint64_t(v)); }
  // Shortest text that reads back as the same double; null for NaN and infinities.
  JsonWriter& num(double v);
  // Nanoseconds as microseconds with exactly three decimals: exact both ways.
  JsonWriter& micros(int64_t ns);
  // `"key":` (the key is written as given: callers pass literals without escapes).
  JsonWriter& key(std::string_view k);

  // Writes the buffer out; false once the stream has failed.
  bool flush();
  bool ok() const { return ok_; }
  uint64_t bytesWritten() const { return written_ + buf_.size(); }

private:
  void maybeFlush() {
    if (buf_.size() >= kFlushBytes) flush();
  }
  static constexpr size_t kFlushBytes = size_t{1} << 20;
  std::ostream& out_;
  std::string buf_;
  uint64_t written_ = 0;
  bool ok_ = true;
};

} // namespace gpuwise::advisor
