// Skipping a test whose input or tool is missing, so CTest reports it Skipped, never Passed.
//
// Catch2 v2 (Debian 12) has no SKIP. skipTest("reason") prints "SKIPPED: reason" and ends the
// test executable with kSkipExitCode (77), which every gpuwise_add_test entry registers as CTest's
// SKIP_RETURN_CODE (cmake/gpuwise.cmake). tests/catch_main.cpp turns a run that merely failed 77
// assertions into exit 1, so 77 means skipped and nothing else.
//
// Exiting ends the whole executable, not just the calling test case. So a test case that can skip
// must not share a CTest entry with cases that would still run: either every case of the
// executable depends on the same input, or the case carries a hidden tag ("[.traces]") named in
// gpuwise_add_test's SKIP_TAGS, which runs it as an entry of its own (NAME_traces).
// If an assertion failed earlier in the run, skipTest reports that instead (exit 1): a skip never
// hides a failure.
#pragma once

#include <string>

namespace gpuwise::test {

inline constexpr int kSkipExitCode = 77;

// Prints "SKIPPED: <reason>" and exits 77 (exit 1 after an earlier failed assertion).
[[noreturn]] void skipTest(const std::string& reason);

} // namespace gpuwise::test
