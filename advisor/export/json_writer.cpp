#include "advisor/export/json_writer.h"

#include <charconv>
#include <cmath>

namespace gpuwise::advisor {

JsonWriter::JsonWriter(std::ostream& out) : out_(out) {
  buf_.reserve(kFlushBytes + 4096);
}

JsonWriter::~JsonWriter() {
  flush();
}

bool JsonWriter::flush() {
  if (ok_ && !buf_.empty()) {
    out_.write(buf_.data(), std::streamsize(buf_.size()));
    if (!out_) ok_ = false;
    written_ += buf_.size();
  }
  buf_.clear();
  return ok_;
}

JsonWriter& JsonWriter::raw(std::string_view text) {
  buf_.append(text);
  maybeFlush();
  return *this;
}

JsonWriter& JsonWriter::str(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  buf_.push_back('"');
  size_t run = 0; // bytes copied as they are, appended in one go
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    buf_.append(s.data() + run, i - run);
    run = i + 1;
    switch (c) {
    case '"': buf_.append("\\\""); break;
    case '\\': buf_.append("\\\\"); break;
    case '\n': buf_.append("\\n"); break;
    case '\r': buf_.append("\\r"); break;
    case '\t': buf_.append("\\t"); break;
    default:
      buf_.append("\\u00");
      buf_.push_back(kHex[c >> 4]);
      buf_.push_back(kHex[c & 15]);
    }
  }
  buf_.append(s.data() + run, s.size() - run);
  buf_.push_back('"');
  maybeFlush();
  return *this;
}

JsonWriter& JsonWriter::num(int64_t v) {
  char tmp[24];
  const auto r = std::to_chars(tmp, tmp + sizeof tmp, v);
  buf_.append(tmp, size_t(r.ptr - tmp));
  return *this;
}

JsonWriter& JsonWriter::num(uint64_t v) {
  char tmp[24];
  const auto r = std::to_chars(tmp, tmp + sizeof tmp, v);
  buf_.append(tmp, size_t(r.ptr - tmp));
  return *this;
}

JsonWriter& JsonWriter::num(double v) {
  if (!std::isfinite(v)) return raw("null");
  char tmp[32];
  const auto r = std::to_chars(tmp, tmp + sizeof tmp, v);
  buf_.append(tmp, size_t(r.ptr - tmp));
  return *this;
}

JsonWriter& JsonWriter::micros(int64_t ns) {
  uint64_t a;
  if (ns < 0) {
    buf_.push_back('-');
    a = uint64_t(0) - uint64_t(ns);
  } else {
    a = uint64_t(ns);
  }
  num(a / 1000);
  const unsigned frac = unsigned(a % 1000);
  buf_.push_back('.');
  buf_.push_back(char('0' + frac / 100));
  buf_.push_back(char('0' + frac / 10 % 10));
  buf_.push_back(char('0' + frac % 10));
  return *this;
}

JsonWriter& JsonWriter::key(std::string_view k) {
  buf_.push_back('"');
  buf_.append(k);
  buf_.append("\":");
  return *this;
}

} // namespace gpuwise::advisor
