// The one list of record kinds: a column (vector) of each, and visitors that walk them all.
//
// Every container of records (the shim's pending records, a wire batch, a process trace) is a
// RecordSet, and code that treats every kind alike walks the columns with forEachColumn (or
// forEachColumnPair, forEachKind) instead of naming them. Adding a record kind means adding its
// column here and to columns(); code that needs a per-kind overload for it (the wire codec's
// record_wire.h) then fails to compile until it has one.
//
// The visitors call `f` once per column, in the order of columns() (the wire order). Plain values;
// owned by one thread at a time.
#pragma once

#include "profiler/model/events.h"

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <vector>

namespace gpuwise::model {

struct RecordSet {
  std::vector<KernelExec> kernels;
  std::vector<Copy> copies;
  std::vector<Memset> memsets;
  std::vector<HostSync> syncs;
  std::vector<ApiCall> api_calls;
  std::vector<Allocation> allocations;
  std::vector<MemorySample> memory_samples;
  std::vector<Range> ranges;                // NVTX ranges and markers (CUPTI tier)
  std::vector<DeviceSample> device_samples; // NVML (live runs)
  std::vector<BlasCall> blas_calls;         // cuBLAS/cuBLASLt hooks (live runs)
  std::vector<Collective> collectives;      // NCCL calls (shim hooks, profiler operators)
  std::vector<PowerSample> power_samples;   // NVML energy, power, clocks (live runs)

  // Every column above, once.
  static constexpr auto columns() {
    return std::tuple{
        &RecordSet::kernels,        &RecordSet::copies,      &RecordSet::memsets,
        &RecordSet::syncs,          &RecordSet::api_calls,   &RecordSet::allocations,
        &RecordSet::memory_samples, &RecordSet::ranges,      &RecordSet::device_samples,
        &RecordSet::blas_calls,     &RecordSet::collectives, &RecordSet::power_samples};
  }

  // f(column) for every column.
  template <class F> void forEachColumn(F&& f) { visit(*this, f); }
  template <class F> void forEachColumn(F&& f) const { visit(*this, f); }
  // f(a's column, b's column of the same kind) for every kind; a and b are RecordSets (or derive
  // from one).
  template <class A, class B, class F> static void forEachColumnPair(A& a, B& b, F&& f) {
    std::apply([&](auto... column) { (f(a.*column, b.*column), ...); }, columns());
  }
  // f(std::type_identity<Record>{}) for every kind: for code that has no RecordSet at hand.
  template <class F> static void forEachKind(F&& f) {
    std::apply(
        [&](auto... column) { (f(std::type_identity<ColumnRecord<decltype(column)>>{}), ...); },
        columns());
  }
  // The column of records of type `Record`.
  template <class Record> std::vector<Record>& column() { return this->*columnOf<Record>(); }
  template <class Record> const std::vector<Record>& column() const {
    return this->*columnOf<Record>();
  }

  size_t size() const {
    size_t n = 0;
    forEachColumn([&](const auto& c) { n += c.size(); });
    return n;
  }
  bool empty() const { return size() == 0; }
  void clear() {
    forEachColumn([](auto& c) { c.clear(); });
  }
  void append(const RecordSet& o) {
    forEachColumnPair(*this, o, [](auto& to, const auto& from) {
      to.insert(to.end(), from.begin(), from.end());
    });
  }

private:
  template <class Member> struct ColumnRecordOf;
  template <class Record> struct ColumnRecordOf<std::vector<Record> RecordSet::*> {
    using type = Record;
  };
  template <class Member> using ColumnRecord = typename ColumnRecordOf<Member>::type;

  template <class Self, class F> static void visit(Self& self, F& f) {
    std::apply([&](auto... column) { (f(self.*column), ...); }, columns());
  }
  template <class Record> static constexpr std::vector<Record> RecordSet::*columnOf() {
    return std::get<std::vector<Record> RecordSet::*>(columns()); // fails for a type not listed
  }
};

// How many kinds of record there are.
inline constexpr size_t kRecordKinds = std::tuple_size_v<decltype(RecordSet::columns())>;

// A column left out of columns() would be skipped by every visitor: the size says it is there.
static_assert(sizeof(RecordSet) == kRecordKinds * sizeof(std::vector<char>),
              "every column of RecordSet must be listed in RecordSet::columns()");

template <class Record, class Columns> inline constexpr bool kListedIn = false;
template <class Record, class... Member>
inline constexpr bool kListedIn<Record, std::tuple<Member...>> =
    (std::is_same_v<Member, std::vector<Record> RecordSet::*> || ...);

// True for the record types a RecordSet holds.
template <class Record>
concept RecordKind = kListedIn<Record, decltype(RecordSet::columns())>;

} // namespace gpuwise::model
