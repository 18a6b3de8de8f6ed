// Expected<T, E> and Status: a value or an error, never both; moves values through.
#include "profiler/model/expected.h"

#include <catch2/catch.hpp>

#include <memory>

using gpuwise::Error;
using gpuwise::Expected;
using gpuwise::Status;
using gpuwise::unexpected;

namespace {

Expected<int> parsePositive(int v) {
  if (v <= 0) return unexpected("not positive: " + std::to_string(v));
  return v;
}

Status check(bool ok) {
  if (!ok) return unexpected("check failed");
  return {};
}

struct DecodeProblem {
  int code;
};

} // namespace

TEST_CASE("Expected holds a value or the error that says why there is none") {
  const auto good = parsePositive(3);
  REQUIRE(good.has_value());
  CHECK(static_cast<bool>(good));
  CHECK(*good == 3);
  const auto bad = parsePositive(-2);
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().message == "not positive: -2");
}

TEST_CASE("Expected moves a move-only value out, and takes any error type") {
  Expected<std::unique_ptr<int>, DecodeProblem> owned = std::make_unique<int>(7);
  REQUIRE(owned);
  std::unique_ptr<int> taken = std::move(owned).value();
  CHECK(*taken == 7);
  Expected<std::unique_ptr<int>, DecodeProblem> failed = unexpected(DecodeProblem{4});
  REQUIRE_FALSE(failed);
  CHECK(failed.error().code == 4);
}

TEST_CASE("Status is success or one Error") {
  CHECK(check(true).has_value());
  const Status s = check(false);
  REQUIRE_FALSE(s);
  CHECK(s.error().message == "check failed");
}
