// MathModeTable: the per-handle cublasSetMathMode memory the cuBLAS hooks read, lock-free.
#include "interposer/math_mode_table.h"

#include <catch2/catch.hpp>

#include <thread>
#include <vector>

using gpuwise::interposer::MathModeTable;

namespace {
const void* handle(uintptr_t i) {
  return reinterpret_cast<const void*>(0x10000 + i * 64);
}
} // namespace

TEST_CASE("modes are remembered per handle; unknown handles answer -1") {
  static MathModeTable table; // as in the shim: a zero-initialised static
  CHECK(table.get(handle(1)) == -1);
  CHECK(table.get(nullptr) == -1);
  table.set(handle(1), 3);
  table.set(handle(2), 0);
  CHECK(table.get(handle(1)) == 3);
  CHECK(table.get(handle(2)) == 0);
  table.set(handle(1), 1);
  CHECK(table.get(handle(1)) == 1);
  table.set(nullptr, 3); // ignored
  CHECK(table.get(nullptr) == -1);
}

TEST_CASE("past the capacity, further handles are not tracked and nothing breaks") {
  static MathModeTable table;
  for (uintptr_t i = 0; i < MathModeTable::kCapacity + 100; ++i)
    table.set(handle(i), int32_t(i % 7));
  size_t tracked = 0;
  for (uintptr_t i = 0; i < MathModeTable::kCapacity + 100; ++i) {
    int32_t m = table.get(handle(i));
    if (m >= 0) {
      CHECK(m == int32_t(i % 7));
      ++tracked;
    }
  }
  CHECK(tracked == MathModeTable::kCapacity);
}

TEST_CASE("threads setting their own handles at once all land", "[concurrency]") {
  static MathModeTable table;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([t] {
      for (uintptr_t i = 0; i < 64; ++i)
        table.set(handle(uintptr_t(t) * 1000 + i), t);
    });
  for (auto& th : threads)
    th.join();
  for (int t = 0; t < 8; ++t)
    for (uintptr_t i = 0; i < 64; ++i)
      REQUIRE(table.get(handle(uintptr_t(t) * 1000 + i)) == t);
}
