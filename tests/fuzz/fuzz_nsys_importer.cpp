// libFuzzer target: the Nsight Systems SQLite importer on arbitrary bytes, the way
// `gpuwise report profile.sqlite` meets a file: importNsys opens it read-only (SQLite's own
// header, page and schema checks), checks that it is an export, reads every table the importer
// knows row by row and joins them into process traces.
//
// Input: the database file's bytes, unchanged, so corpus/nsys_importer/ holds real (tiny) exports
// that `sqlite3` opens. SQLite reads databases from files: each input is written to one temporary
// file per process (in /dev/shm where it exists, so no disk is touched), which the importer
// opens as `gpuwise report` would.
//
// Oracles beyond "no crash, no sanitizer finding": an error is one line that starts with the file
// name, carries no control byte (SQLite quotes a malformed schema's names: the importer escapes
// them, so a file can neither split the line nor drive the terminal) and comes with no partial
// trace; a success lists its file.
#include "advisor/import/nsys_importer.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

namespace {

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_nsys_importer: oracle failed: %s: %s\n", what, detail.c_str());
  std::abort();
}

const std::string& scratchPath() {
  static const std::string path = [] {
    const char* dir = ::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    return std::string(dir) + "/fuzz_nsys_importer." + std::to_string(::getpid()) + ".sqlite";
  }();
  return path;
}

void removeScratch() {
  ::unlink(scratchPath().c_str());
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Real exports are megabytes; the seeds are a few KB, and bigger inputs only slow each run.
  if (size > (size_t{1} << 20)) return 0;
  static const bool registered = std::atexit(removeScratch) == 0;
  (void)registered;
  const std::string& path = scratchPath();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) fail("cannot write the scratch file", path);
  const bool written = std::fwrite(data, 1, size, f) == size;
  if (std::fclose(f) != 0 || !written) fail("cannot write the scratch file", path);

  const auto result = gpuwise::advisor::importNsys({path});
  if (!result.ok()) {
    for (unsigned char c : result.error)
      if (c < 0x20 || c == 0x7f)
        fail("error carries a control byte (or is more than one line)", result.error);
    if (result.error.rfind(path, 0) != 0)
      fail("error does not start with the file name", result.error);
    if (!result.trace.processes.empty()) fail("an error came with a partial trace", result.error);
  } else {
    if (result.trace.source.files.size() != 1 || result.trace.source.files[0] != path)
      fail("the trace does not list its file", result.error);
  }
  return 0;
}
