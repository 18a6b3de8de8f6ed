// skipTest() and the main's exit codes (tests/skip_test.h), run by the CTest entry
// skip_test_exit_codes: each hidden case is run alone and its exit status checked.
#include "tests/skip_test.h"

#include <catch2/catch.hpp>

TEST_CASE("a skip exits 77", "[.skips]") {
  CHECK(true);
  gpuwise::test::skipTest("the selftest's input is missing");
}

TEST_CASE("a skip after a failed assertion reports the failure", "[.fail_then_skip]") {
  CHECK(false);
  gpuwise::test::skipTest("the selftest's input is missing");
}

TEST_CASE("77 failed assertions are a failure, not a skip", "[.fails_77]") {
  for (int i = 0; i < 77; ++i)
    CHECK(i < 0);
}

TEST_CASE("a passing run exits 0", "[.passes]") {
  CHECK(true);
}
