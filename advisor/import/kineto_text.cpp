#include "advisor/import/kineto_text.h"
#include "profiler/model/sync_names.h"

#include <limits>

namespace gpuwise::advisor {
namespace {

using model::CopyDirection;
using model::MemoryKind;
using model::SyncKind;

bool startsWith(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}
bool endsWith(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}
bool isDigit(char c) {
  return c >= '0' && c <= '9';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() &&
         (s.front() == ' ' || s.front() == '\t' || s.front() == '\n' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

std::string_view unquote(std::string_view s) {
  s = trim(s);
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') return s.substr(1, s.size() - 2);
  return s;
}

constexpr int kMaxDigits = 36; // significant digits kept in the 128-bit mantissa

unsigned __int128 pow10u128(int n) {
  unsigned __int128 r = 1;
  while (n-- > 0)
    r *= 10;
  return r;
}

} // namespace

// The common case: at most 19 digits (they fit 64 bits), no exponent.
bool parseScaledDecimalFast(std::string_view s, int scale, int64_t* out, bool* handled) {
  *handled = false;
  size_t i = 0;
  bool negative = false;
  if (i < s.size() && s[i] == '-') {
    negative = true;
    ++i;
  }
  uint64_t m = 0;
  int digits = 0, frac = 0;
  const size_t intStart = i;
  for (; i < s.size() && isDigit(s[i]); ++i, ++digits)
    m = m * 10 + uint64_t(s[i] - '0');
  if (i == intStart) return false;
  if (i < s.size() && s[i] == '.') {
    ++i;
    const size_t fracStart = i;
    for (; i < s.size() && isDigit(s[i]); ++i, ++digits, ++frac)
      m = m * 10 + uint64_t(s[i] - '0');
    if (i == fracStart) return false;
  }
  if (i != s.size() || digits > 19) return false; // exponent, junk or long: the general path
  static constexpr uint64_t kPow10[] = {1,
                                        10,
                                        100,
                                        1000,
                                        10000,
                                        100000,
                                        1000000,
                                        10000000,
                                        100000000,
                                        1000000000,
                                        10000000000ull,
                                        100000000000ull,
                                        1000000000000ull,
                                        10000000000000ull,
                                        100000000000000ull,
                                        1000000000000000ull,
                                        10000000000000000ull,
                                        100000000000000000ull,
                                        1000000000000000000ull};
  const int e = scale - frac;
  uint64_t v;
  if (e >= 0) {
    if (e > 18 || (m != 0 && m > uint64_t(INT64_MAX) / kPow10[e])) return false;
    v = m * kPow10[e];
  } else {
    if (-e > 18) return false;
    const uint64_t d = kPow10[-e];
    v = m / d + ((m % d) * 2 >= d ? 1 : 0);
  }
  if (v > uint64_t(INT64_MAX)) return false;
  *out = negative ? -int64_t(v) : int64_t(v);
  *handled = true;
  return true;
}

bool parseScaledDecimal(std::string_view token, int scale, int64_t* out) {
  std::string_view s = token;
  if (s.empty() || (s.front() != '-' && !isDigit(s.front())) || !isDigit(s.back()))
    s = unquote(token);
  bool handled;
  if (parseScaledDecimalFast(s, scale, out, &handled) || handled) return true;
  size_t i = 0;
  bool negative = false;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) negative = s[i++] == '-';
  unsigned __int128 mantissa = 0;
  int digits = 0;        // significant digits taken into the mantissa
  int exponent = 0;      // value = mantissa * 10^exponent
  int firstDropped = -1; // first digit that did not fit, for rounding
  bool any = false;
  for (; i < s.size() && isDigit(s[i]); ++i) {
    any = true;
    if (digits < kMaxDigits) {
      if (mantissa != 0 || s[i] != '0') ++digits;
      mantissa = mantissa * 10 + unsigned(s[i] - '0');
    } else {
      if (firstDropped < 0) firstDropped = s[i] - '0';
      ++exponent;
    }
  }
  if (i < s.size() && s[i] == '.') {
    ++i;
    for (; i < s.size() && isDigit(s[i]); ++i) {
      any = true;
      if (digits < kMaxDigits) {
        if (mantissa != 0 || s[i] != '0') ++digits;
        mantissa = mantissa * 10 + unsigned(s[i] - '0');
        --exponent;
      } else if (firstDropped < 0) {
        firstDropped = s[i] - '0';
      }
    }
  }
  if (!any) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    bool expNegative = false;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) expNegative = s[i++] == '-';
    int e = 0;
    bool expAny = false;
    for (; i < s.size() && isDigit(s[i]); ++i) {
      expAny = true;
      if (e < 100000) e = e * 10 + (s[i] - '0');
    }
    if (!expAny) return false;
    exponent += expNegative ? -e : e;
  }
  if (i != s.size()) return false;

  exponent += scale;
  unsigned __int128 value;
  if (exponent >= 0) {
    if (mantissa == 0) {
      value = 0;
    } else {
      if (exponent > 38) return false;
      const unsigned __int128 p = pow10u128(exponent);
      if (mantissa > (~static_cast<unsigned __int128>(0)) / p) return false;
      value = mantissa * p;
    }
    // A dropped digit only matters when nothing was scaled away after it (exponent 0).
    if (exponent == 0 && firstDropped >= 5) ++value;
  } else if (-exponent > 38) {
    value = 0;
  } else {
    const unsigned __int128 d = pow10u128(-exponent);
    value = mantissa / d;
    const unsigned __int128 r = mantissa % d;
    if (2 * r >= d) ++value; // ties away from zero
  }
  const auto limit = static_cast<unsigned __int128>(std::numeric_limits<int64_t>::max());
  if (value > limit + (negative ? 1 : 0)) return false;
  *out =
      negative ? static_cast<int64_t>(-static_cast<__int128>(value)) : static_cast<int64_t>(value);
  return true;
}

bool parseLooseInt(std::string_view token, int64_t* out) {
  if (!token.empty() && isDigit(token.front()) && isDigit(token.back()) && token.size() < 19 &&
      parseScaledDecimal(token, 0, out))
    return true; // a plain JSON integer: the usual case
  std::string_view s = unquote(token);
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    uint64_t v = 0;
    for (size_t i = 2; i < s.size(); ++i) {
      const char c = s[i];
      int d;
      if (isDigit(c))
        d = c - '0';
      else if (c >= 'a' && c <= 'f')
        d = c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        d = c - 'A' + 10;
      else
        return false;
      if (v >> 60) return false;
      v = v * 16 + unsigned(d);
    }
    *out = static_cast<int64_t>(v);
    return true;
  }
  return parseScaledDecimal(s, 0, out);
}

bool parseTrailingInt(std::string_view text, int64_t* out) {
  std::string_view s = trim(unquote(text));
  size_t end = s.size();
  size_t begin = end;
  while (begin > 0 && isDigit(s[begin - 1]))
    --begin;
  if (begin == end || end - begin > 18) return false;
  int64_t v = 0;
  for (size_t i = begin; i < end; ++i)
    v = v * 10 + (s[i] - '0');
  *out = v;
  return true;
}

MemoryKind parseMemoryKindWord(std::string_view word) {
  word = trim(word);
  if (word == "Pageable") return MemoryKind::Pageable;
  if (word == "Pinned") return MemoryKind::Pinned;
  if (word == "Device" || word == "Device Static") return MemoryKind::Device;
  if (word == "Managed" || word == "Managed Static") return MemoryKind::Managed;
  if (word == "Array") return MemoryKind::Array;
  return MemoryKind::Unknown; // "Unknown", "Host" (ROCm: pinned or pageable, not said)
}

MemcpyNameInfo parseMemcpyName(std::string_view name) {
  MemcpyNameInfo info;
  if (!startsWith(name, "Memcpy")) return info;
  info.ok = true;
  std::string_view rest = trim(name.substr(6));
  const size_t space = rest.find_first_of(" (");
  const std::string_view kind = rest.substr(0, space);
  if (kind == "HtoD" || kind == "HtoA")
    info.direction = CopyDirection::HostToDevice;
  else if (kind == "DtoH" || kind == "AtoH")
    info.direction = CopyDirection::DeviceToHost;
  else if (kind == "DtoD" || kind == "AtoA" || kind == "AtoD" || kind == "DtoA")
    info.direction = CopyDirection::DeviceToDevice;
  else if (kind == "HtoH")
    info.direction = CopyDirection::HostToHost;
  else if (kind == "PtoP")
    info.direction = CopyDirection::PeerToPeer;
  const size_t open = rest.find('(');
  const size_t arrow = rest.find("->");
  const size_t close = rest.rfind(')');
  if (open != std::string_view::npos && arrow != std::string_view::npos &&
      close != std::string_view::npos && open < arrow && arrow < close) {
    info.src = parseMemoryKindWord(rest.substr(open + 1, arrow - open - 1));
    info.dst = parseMemoryKindWord(rest.substr(arrow + 2, close - arrow - 2));
  }
  // Arrays are device memory; the kind word says so only when CUPTI knew.
  return info;
}

MemoryKind parseMemsetName(std::string_view name) {
  const size_t open = name.find('(');
  const size_t close = name.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open)
    return MemoryKind::Unknown;
  return parseMemoryKindWord(name.substr(open + 1, close - open - 1));
}

SyncKind syncKindForApi(std::string_view api) {
  if (api == "cudaDeviceSynchronize" || api == "cudaThreadSynchronize" ||
      api == "cuCtxSynchronize" || api == "hipDeviceSynchronize" || api == "synchronizeDevice")
    return SyncKind::Device;
  if (api == "cudaStreamSynchronize" || api == "cuStreamSynchronize" ||
      api == "hipStreamSynchronize" || api == "synchronizeStream")
    return SyncKind::Stream;
  if (api == "cudaEventSynchronize" || api == "cuEventSynchronize" || api == "hipEventSynchronize")
    return SyncKind::Event;
  if ((startsWith(api, "cudaMemcpy") || startsWith(api, "cuMemcpy") ||
       startsWith(api, "hipMemcpy")) &&
      api.find("Async") == std::string_view::npos)
    return SyncKind::SyncCopy;
  return SyncKind::Unknown;
}

SyncKind syncKindForCudaSync(std::string_view name) {
  for (auto kind : {SyncKind::Device, SyncKind::Stream, SyncKind::Event, SyncKind::StreamWaitEvent,
                    SyncKind::SyncCopy})
    if (name == kinetoSyncName(kind)) return kind;
  return SyncKind::Unknown;
}

bool isAsyncApi(std::string_view api) {
  return api.find("Async") != std::string_view::npos;
}

int64_t profilerStepNumber(std::string_view name) {
  constexpr std::string_view kPrefix = "ProfilerStep#";
  if (!startsWith(name, kPrefix) || name.size() == kPrefix.size() ||
      name.size() > kPrefix.size() + 18)
    return -1;
  int64_t n = 0;
  for (char c : name.substr(kPrefix.size())) {
    if (!isDigit(c)) return -1;
    n = n * 10 + (c - '0');
  }
  return n;
}

bool isDataLoaderRange(std::string_view name) {
  return (startsWith(name, "enumerate(DataLoader)#") || startsWith(name, "enumerate(DataPipe)#")) &&
         name.find("__next__") != std::string_view::npos;
}

bool isPythonDataLoaderNext(std::string_view name) {
  return name.find("torch/utils/data/dataloader.py(") != std::string_view::npos &&
         endsWith(name, "): __next__");
}

bool isCommunicationKernel(std::string_view name) {
  if (startsWith(name, "void ")) name.remove_prefix(5);
  return startsWith(name, "nccl") || startsWith(name, "rccl");
}

} // namespace gpuwise::advisor
