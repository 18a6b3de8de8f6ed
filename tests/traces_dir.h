// Where the tests find real traces (recorded by other projects on real GPUs).
//
// The full set is $GPUWISE_TRACES_DIR (CTest sets it to ../shared/traces beside the repository).
// Where that folder is missing or holds no traces (a clone anywhere else), tests read the small
// subset committed under tests/data/traces (its README lists sources, licences and checksums) with
// the same layout: kineto/... and nsys/.... So the checks against the independent references
// (tests/tools/*_reference.py) run on every clone, and on the full set where it is present.
//
// A test that needs a trace only the full set has calls requireTrace() or requireFullTraces(),
// which skip it (tests/skip_test.h); such test cases carry the hidden tag [.full_traces] so that
// they run as an entry of their own (gpuwise_add_test's SKIP_TAGS full_traces).
#pragma once

#include "tests/skip_test.h"

#include <cstdlib>
#include <filesystem>
#include <string>

namespace gpuwise::test {

// $GPUWISE_TRACES_DIR, else ../shared/traces from the working directory.
inline std::filesystem::path fullTracesDir() {
  const char* env = std::getenv("GPUWISE_TRACES_DIR");
  return env != nullptr && *env != '\0' ? std::filesystem::path(env)
                                        : std::filesystem::path("../shared/traces");
}

// The committed subset: $GPUWISE_SOURCE_DIR/tests/data/traces.
inline std::filesystem::path subsetTracesDir() {
  const char* env = std::getenv("GPUWISE_SOURCE_DIR");
  return std::filesystem::path(env != nullptr && *env != '\0' ? env : ".") / "tests/data/traces";
}

// True when the full set is there: its kineto/ or nsys/ folder exists.
inline bool haveFullTraces() {
  std::error_code ec;
  const auto root = fullTracesDir();
  return std::filesystem::is_directory(root / "kineto", ec) ||
         std::filesystem::is_directory(root / "nsys", ec);
}

// The folder the trace tests read: the full set when present, else the committed subset.
inline std::filesystem::path realTracesDir() {
  return haveFullTraces() ? fullTracesDir() : subsetTracesDir();
}

// The full set's folder `sub` ("kineto", "nsys/..."); skips the test where the full set is absent.
inline std::filesystem::path requireFullTraces(const std::string& sub = "") {
  const auto path = fullTracesDir() / sub;
  std::error_code ec;
  if (!haveFullTraces() || !std::filesystem::exists(path, ec))
    skipTest("no traces at " + path.string() + " (the full set: set GPUWISE_TRACES_DIR)");
  return path;
}

// The trace `rel` ("kineto/hta/...") in realTracesDir(); skips the test where it is not there.
inline std::filesystem::path requireTrace(const std::string& rel) {
  const auto path = realTracesDir() / rel;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    skipTest("no trace " + path.string() + " (in the full set only: set GPUWISE_TRACES_DIR)");
  return path;
}

} // namespace gpuwise::test
