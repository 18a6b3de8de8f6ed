#include "advisor/import/trace_splitter.h"

#include <cstdio>
#include <cstring>
#include <immintrin.h>
#include <string_view>

namespace gpuwise::advisor {
namespace {

constexpr size_t kMaxMetaBytes = size_t{1} << 30;

// Positions of the characters escaped by an odd run of backslashes (simdjson's classic stage-1
// algorithm); `prevOdd` carries a run that ends the previous block.
inline uint64_t findEscaped(uint64_t backslash, uint64_t& prevOdd) {
  if (backslash == 0) {
    const uint64_t escaped = prevOdd;
    prevOdd = 0;
    return escaped;
  }
  constexpr uint64_t kEven = 0x5555555555555555ULL;
  constexpr uint64_t kOdd = ~kEven;
  const uint64_t startEdges = backslash & ~(backslash << 1);
  const uint64_t evenStartMask = kEven ^ prevOdd;
  const uint64_t evenStarts = startEdges & evenStartMask;
  const uint64_t oddStarts = startEdges & ~evenStartMask;
  const uint64_t evenCarries = backslash + evenStarts;
  uint64_t oddCarries;
  const bool endsOdd = __builtin_add_overflow(backslash, oddStarts, &oddCarries);
  oddCarries |= prevOdd;
  prevOdd = endsOdd ? 1 : 0;
  const uint64_t evenCarryEnds = evenCarries & ~backslash;
  const uint64_t oddCarryEnds = oddCarries & ~backslash;
  return (evenCarryEnds & kOdd) | (oddCarryEnds & kEven);
}

inline uint64_t prefixXor(uint64_t x) {
  x ^= x << 1;
  x ^= x << 2;
  x ^= x << 4;
  x ^= x << 8;
  x ^= x << 16;
  x ^= x << 32;
  return x;
}

// Brackets outside strings in one 64-byte block; updates the string and escape carries.
inline uint64_t finishBlock(uint64_t backslash, uint64_t quote, uint64_t brackets,
                            uint64_t& inString, uint64_t& prevOdd) {
  quote &= ~findEscaped(backslash, prevOdd);
  const uint64_t mask = prefixXor(quote) ^ inString;
  inString = uint64_t(int64_t(mask) >> 63);
  return brackets & ~mask;
}

uint64_t blockScalar(const uint8_t* p, uint64_t& inString, uint64_t& prevOdd) {
  uint64_t backslash = 0, quote = 0, brackets = 0;
  for (int i = 0; i < 64; ++i) {
    const uint8_t c = p[i];
    const uint64_t bit = uint64_t{1} << i;
    if (c == '\\')
      backslash |= bit;
    else if (c == '"')
      quote |= bit;
    else if ((c | 0x20) == '{' || (c | 0x20) == '}')
      brackets |= bit;
  }
  return finishBlock(backslash, quote, brackets, inString, prevOdd);
}

__attribute__((target("avx2"), always_inline)) inline uint64_t eqMask(__m256i lo, __m256i hi,
                                                                      char c) {
  const __m256i v = _mm256_set1_epi8(c);
  const uint32_t l = uint32_t(_mm256_movemask_epi8(_mm256_cmpeq_epi8(lo, v)));
  const uint32_t h = uint32_t(_mm256_movemask_epi8(_mm256_cmpeq_epi8(hi, v)));
  return uint64_t(l) | (uint64_t(h) << 32);
}

__attribute__((target("avx2"))) uint64_t blockAvx2(const uint8_t* p, uint64_t& inString,
                                                   uint64_t& prevOdd) {
  const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  const __m256i hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32));
  // '[' | 0x20 == '{' and ']' | 0x20 == '}': one compare finds both kinds of bracket.
  const __m256i x20 = _mm256_set1_epi8(0x20);
  const __m256i lo20 = _mm256_or_si256(lo, x20);
  const __m256i hi20 = _mm256_or_si256(hi, x20);
  const uint64_t brackets = eqMask(lo20, hi20, '{') | eqMask(lo20, hi20, '}');
  return finishBlock(eqMask(lo, hi, '\\'), eqMask(lo, hi, '"'), brackets, inString, prevOdd);
}

bool haveAvx2() {
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
}

bool isSpace(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

// The key just before `"key": ` at the end of the metadata text.
std::string_view lastKey(const std::string& meta) {
  size_t i = meta.size();
  while (i > 0 && isSpace(meta[i - 1]))
    --i;
  if (i == 0 || meta[i - 1] != ':') return {};
  --i;
  while (i > 0 && isSpace(meta[i - 1]))
    --i;
  if (i == 0 || meta[i - 1] != '"') return {};
  const size_t end = --i;
  const size_t begin = meta.rfind('"', end - 1);
  if (begin == std::string::npos) return {};
  return std::string_view(meta).substr(begin + 1, end - begin - 1);
}

std::string describeByte(char c) {
  if (c >= 0x20 && c < 0x7f) return std::string("'") + c + "'";
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02x", unsigned(uint8_t(c)));
  return buf;
}

} // namespace

TraceSplitter::TraceSplitter() = default;

bool TraceSplitter::fail(std::string message, size_t pos) {
  if (pos != npos) message += " (at byte " + std::to_string(stream_offset_ + pos) + ")";
  error_ = std::move(message);
  return false;
}

void TraceSplitter::flushMeta(const char* buf, size_t upto) {
  if (upto > meta_from_) meta_.append(buf + meta_from_, upto - meta_from_);
  meta_from_ = upto;
}

bool TraceSplitter::onStructural(const char* buf, size_t pos, char c) {
  const bool open = c == '{' || c == '[';
  if (mode_ == Mode::Done) return fail("unexpected data after the end of the JSON document", pos);
  if (open) {
    if (depth_ == 0) {
      if (c == '[') {
        // Chrome's bare-array form: the whole document is the events array.
        top_level_array_ = true;
        mode_ = Mode::Events;
        events_depth_ = 1;
        batch_begin_ = pos;
        first_element_from_ = pos + 1;
        saw_events_ = true;
      } else {
        mode_ = Mode::Meta;
        meta_from_ = pos;
      }
    } else if (mode_ == Mode::Meta && depth_ == 1 && c == '[') {
      flushMeta(buf, pos);
      const std::string_view key = lastKey(meta_);
      if (key == "traceEvents") {
        if (saw_events_) return fail("two traceEvents arrays in one document", pos);
        meta_ += "null";
        mode_ = Mode::Events;
        events_depth_ = 2;
        batch_begin_ = pos;
        first_element_from_ = pos + 1;
        saw_events_ = true;
      } else if (key == "nodes") {
        return fail("a PyTorch execution trace (a graph of \"nodes\"), not a Chrome trace of timed "
                    "events; give the Kineto trace recorded with it instead",
                    npos);
      }
    }
    if (mode_ == Mode::Events && depth_ == events_depth_ && c == '{') event_start_ = pos;
    ++depth_;
    return true;
  }
  --depth_;
  if (depth_ < 0) return fail("unbalanced brackets: more closing than opening", pos);
  if (mode_ == Mode::Events) {
    if (depth_ == events_depth_) {
      if (c == '}' && event_start_ != npos) {
        events_.push_back({event_start_, pos + 1});
        event_start_ = npos;
        last_boundary_ = pos + 1;
      }
    } else if (depth_ == events_depth_ - 1) {
      if (c != ']') return fail("malformed traceEvents array", pos);
      events_end_ = pos + 1;
      if (top_level_array_) {
        mode_ = Mode::Done;
      } else {
        mode_ = Mode::Meta;
        meta_from_ = pos + 1;
      }
    }
  } else if (mode_ == Mode::Meta && depth_ == 0) {
    flushMeta(buf, pos + 1);
    mode_ = Mode::Done;
  }
  return true;
}

bool TraceSplitter::checkFirstElement(const char* buf, size_t avail, bool final) {
  size_t i = first_element_from_;
  while (i < avail && isSpace(buf[i]))
    ++i;
  if (i == avail) {
    first_element_from_ = final ? npos : i;
    return true;
  }
  first_element_from_ = npos;
  const char c = buf[i];
  if (c == '{' || c == ']') return true;
  if (top_level_array_ && c == '[')
    return fail("a JSON array of arrays, not a Chrome trace of events (this is the layout of a "
                "PyTorch memory timeline export)",
                npos);
  return fail(std::string(top_level_array_ ? "the top-level array" : "traceEvents") +
                  " holds values that are not event objects (starts with " + describeByte(c) + ")",
              i);
}

bool TraceSplitter::checkTrailing(const char* buf, size_t from, size_t avail) {
  for (size_t i = from; i < avail; ++i)
    if (!isSpace(buf[i]) && buf[i] != '\0')
      return fail("unexpected data after the end of the JSON document", i);
  return true;
}

bool TraceSplitter::scan(const char* buf, size_t avail, bool final) {
  if (!error_.empty()) return false;
  if (mode_ == Mode::Start) {
    // A UTF-8 byte-order mark is allowed before the document; nothing else but whitespace is.
    if (stream_offset_ + scan_pos_ == 0 && avail >= 3 && std::memcmp(buf, "\xEF\xBB\xBF", 3) == 0)
      scan_pos_ = 3;
    while (scan_pos_ < avail && isSpace(buf[scan_pos_]))
      ++scan_pos_;
    if (scan_pos_ < avail && buf[scan_pos_] != '{' && buf[scan_pos_] != '[')
      return fail("not a JSON trace (the file starts with " + describeByte(buf[scan_pos_]) +
                      ", not '{' or '[')",
                  scan_pos_);
  }
  if (mode_ == Mode::Done) {
    if (!checkTrailing(buf, scan_pos_, avail)) return false;
    scan_pos_ = avail;
  }
  const bool avx2 = !force_scalar_ && haveAvx2();
  size_t donePos = npos;
  auto runBlock = [&](const uint8_t* block, size_t base) {
    uint64_t mask = avx2 ? blockAvx2(block, prev_in_string_, prev_odd_backslash_)
                         : blockScalar(block, prev_in_string_, prev_odd_backslash_);
    while (mask) {
      const size_t pos = base + size_t(__builtin_ctzll(mask));
      mask &= mask - 1;
      const char c = buf[pos];
      // Fast path: brackets nested inside an event only move the depth.
      if (mode_ == Mode::Events) {
        if (c == '{' || c == '[') {
          if (depth_ > events_depth_) {
            ++depth_;
            continue;
          }
        } else if (depth_ > events_depth_ + 1) {
          --depth_;
          continue;
        }
      }
      if (!onStructural(buf, pos, c)) return false;
      if (mode_ == Mode::Done && donePos == npos) donePos = pos + 1;
    }
    return true;
  };
  while (mode_ != Mode::Done && scan_pos_ + 64 <= avail) {
    if (!runBlock(reinterpret_cast<const uint8_t*>(buf + scan_pos_), scan_pos_)) return false;
    scan_pos_ += 64;
  }
  if (final && mode_ != Mode::Done && scan_pos_ < avail) {
    // The last partial block, padded with spaces so nothing past the end counts.
    alignas(64) uint8_t tail[64];
    std::memset(tail, ' ', sizeof tail);
    std::memcpy(tail, buf + scan_pos_, avail - scan_pos_);
    if (!runBlock(tail, scan_pos_)) return false;
    scan_pos_ = avail;
  }
  if (donePos != npos) {
    if (!checkTrailing(buf, donePos, avail)) return false;
    scan_pos_ = avail;
  }
  if (first_element_from_ != npos && !checkFirstElement(buf, scan_pos_, final)) return false;
  if (mode_ == Mode::Meta) {
    flushMeta(buf, scan_pos_);
    if (meta_.size() > kMaxMetaBytes)
      return fail("no traceEvents array in the first 1 GiB: not a Chrome trace", npos);
  }
  if (final && mode_ != Mode::Done) {
    if (mode_ == Mode::Start)
      return fail(avail == 0 && stream_offset_ == 0 ? "empty file"
                                                    : "no JSON content (only whitespace)",
                  npos);
    return fail(std::string("truncated JSON: the document ends ") +
                    (prev_in_string_ ? "inside a string" : "before its closing bracket"),
                avail);
  }
  return true;
}

void TraceSplitter::rebase(size_t from, size_t skipped, size_t to, size_t batch_begin) {
  auto move = [&](size_t p) { return p >= from + skipped ? p - from - skipped + to : to; };
  scan_pos_ = move(scan_pos_);
  if (mode_ == Mode::Meta || mode_ == Mode::Start) meta_from_ = move(meta_from_);
  if (first_element_from_ != npos) first_element_from_ = move(first_element_from_);
  if (event_start_ != npos)
    event_start_ = event_start_ >= from + skipped ? move(event_start_) : npos;
  events_.clear();
  stream_offset_ = stream_offset_ + from + skipped - to;
  batch_begin_ = batch_begin;
  last_boundary_ = npos;
  events_end_ = npos;
}

} // namespace gpuwise::advisor
