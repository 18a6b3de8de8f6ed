// Helpers shared by the importer tests: gzip in memory (libdeflate), temporary files, the union
// length of GPU intervals, and the traces folder from the test environment.
#pragma once

#include "profiler/model/trace.h"
#include "tests/traces_dir.h"

#include <libdeflate.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <utility>
#include <vector>

namespace gpuwise::test {

inline std::string gzipString(const std::string& text, int level = 6) {
  libdeflate_compressor* c = libdeflate_alloc_compressor(level);
  std::string out(libdeflate_gzip_compress_bound(c, text.size()), '\0');
  const size_t n = libdeflate_gzip_compress(c, text.data(), text.size(), out.data(), out.size());
  libdeflate_free_compressor(c);
  out.resize(n);
  return out;
}

inline std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A file under a per-process temporary folder, removed with the folder at exit.
class TempDir {
public:
  TempDir() {
    path_ = std::filesystem::temp_directory_path() /
            ("gpuwise_import_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string write(const std::string& name, const std::string& bytes) const {
    const auto p = path_ / name;
    std::ofstream(p, std::ios::binary) << bytes;
    return p.string();
  }
  std::string path(const std::string& name) const { return (path_ / name).string(); }

private:
  std::filesystem::path path_;
};

// The real traces: the full set in $GPUWISE_TRACES_DIR, else tests/data/traces
// (tests/traces_dir.h).
inline std::string tracesDir() {
  return gpuwise::test::realTracesDir().string();
}

inline std::string sourceDir() {
  const char* d = std::getenv("GPUWISE_SOURCE_DIR");
  return d ? std::string(d) : std::string(".");
}

struct Span {
  int64_t span = 0, busy = 0;
};

// First start to last end, and the length of the union of the intervals.
inline Span unionSpan(std::vector<std::pair<int64_t, int64_t>> v) {
  Span s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  int64_t lo = v.front().first, hi = v.front().first, curS = v.front().first,
          curE = v.front().second;
  for (const auto& [a, b] : v) {
    hi = std::max(hi, b);
    if (a > curE) {
      s.busy += curE - curS;
      curS = a;
      curE = b;
    } else {
      curE = std::max(curE, b);
    }
  }
  s.busy += curE - curS;
  s.span = hi - lo;
  return s;
}

inline std::vector<std::pair<int64_t, int64_t>> gpuIntervals(const model::ProcessTrace& p,
                                                             int device = -1) {
  std::vector<std::pair<int64_t, int64_t>> v;
  for (const auto& k : p.kernels)
    if (device < 0 || int(k.device) == device) v.emplace_back(k.start, k.end);
  for (const auto& c : p.copies)
    if (device < 0 || int(c.device) == device) v.emplace_back(c.start, c.end);
  for (const auto& m : p.memsets)
    if (device < 0 || int(m.device) == device) v.emplace_back(m.start, m.end);
  return v;
}

} // namespace gpuwise::test
