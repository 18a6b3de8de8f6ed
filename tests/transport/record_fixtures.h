// Records with every field filled, and field-by-field comparison, for the codec tests.
#pragma once

#define CATCH_CONFIG_ENABLE_TUPLE_STRINGMAKER
#include <catch2/catch.hpp>

#include "profiler/model/events.h"
#include "profiler/model/name_table.h"
#include "profiler/model/process.h"
#include "transport/codec.h"

#include <bit>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

namespace gpuwise::transport::testing {

// Every field of each record as a tuple (correlation excluded: not carried), so that a mismatch
// prints both sides.
inline auto fields(const model::KernelExec& k) {
  return std::tuple(k.start, k.end, k.launch_start, k.launch_end, k.name, k.device, k.stream,
                    k.thread, k.grid.x, k.grid.y, k.grid.z, k.block.x, k.block.y, k.block.z,
                    k.registers_per_thread, k.static_shared_bytes, k.dynamic_shared_bytes,
                    k.graph_id, int(k.flags), std::bit_cast<uint32_t>(k.achieved_occupancy),
                    k.graph_node_id);
}
inline auto fields(const model::Copy& c) {
  return std::tuple(c.start, c.end, c.call_start, c.call_end, c.bytes, c.device, c.stream, c.thread,
                    int(c.direction), int(c.src), int(c.dst), c.async);
}
inline auto fields(const model::Memset& m) {
  return std::tuple(m.start, m.end, m.call_start, m.call_end, m.bytes, m.device, m.stream, m.thread,
                    int(m.dst), m.async);
}
inline auto fields(const model::HostSync& s) {
  return std::tuple(s.start, s.end, s.device, s.stream, s.thread, int(s.kind));
}
inline auto fields(const model::ApiCall& a) {
  return std::tuple(a.start, a.end, a.name, a.thread);
}
inline auto fields(const model::Allocation& a) {
  return std::tuple(a.time, a.address, a.bytes, a.device, int(a.kind), a.is_free);
}
inline auto fields(const model::MemorySample& m) {
  return std::tuple(m.time, m.device, m.allocated_bytes, m.reserved_bytes);
}
inline auto fields(const model::Range& r) {
  return std::tuple(r.start, r.end, r.name, r.thread, r.device, r.stream, int(r.kind), r.step);
}

inline auto fields(const model::DeviceSample& d) {
  return std::tuple(d.time, d.device, d.process_used_bytes, d.device_used_bytes,
                    d.device_total_bytes, d.gpu_utilization, d.memory_utilization);
}
inline auto fields(const model::PowerSample& p) {
  return std::tuple(p.time, p.device, p.energy_mj, p.power_mw, p.sm_clock_mhz, p.memory_clock_mhz);
}
inline auto fields(const model::BlasCall& c) {
  return std::tuple(c.start, c.end, c.thread, c.device, c.stream, int(c.api), c.a_type, c.b_type,
                    c.c_type, c.compute_type, c.scale_type, c.math_mode, c.status, c.m, c.n, c.k,
                    c.batch);
}
inline auto fields(const model::Collective& c) {
  return std::tuple(c.start, c.end, c.correlation, c.communicator, c.sequence, c.in_count,
                    c.out_count, c.thread, c.device, c.stream, c.group_size, c.group_rank, c.peer,
                    int(c.kind), int(c.element));
}

template <class T> void requireSameRecords(const std::vector<T>& sent, const std::vector<T>& got) {
  REQUIRE(got.size() == sent.size());
  for (size_t i = 0; i < sent.size(); ++i) {
    INFO("record " << i);
    REQUIRE(fields(got[i]) == fields(sent[i]));
  }
}

// Random values with a bias to the edges a codec gets wrong: 0 (unknown), extremes, big jumps.
class Randomizer {
public:
  explicit Randomizer(uint64_t seed) : rng_(seed) {}

  uint32_t u32() { return pick() ? edgeU32() : static_cast<uint32_t>(rng_()); }
  uint64_t u64() { return pick() ? edgeU64() : rng_(); }
  int64_t time() {
    switch (rng_() % 6) {
    case 0: return 0; // unknown
    case 1: return edge64();
    default: return base_ + static_cast<int64_t>(rng_() % 10'000'000'000ull); // within 10 s
    }
  }
  uint8_t below(uint8_t n) { return static_cast<uint8_t>(rng_() % n); }
  bool coin() { return rng_() & 1; }
  std::mt19937_64& engine() { return rng_; }

  // A name with bytes a text codec would trip on: NUL, 0xFF, newlines, invalid UTF-8.
  std::string oddName(int i) {
    std::string s = "k" + std::to_string(i);
    s.push_back('\0');
    s += "\xff\xfe\n\t\"\\";
    for (int j = 0; j < i % 17; ++j)
      s.push_back(static_cast<char>(rng_() & 0xff));
    return s;
  }

  model::KernelExec kernel(const std::vector<model::NameId>& names) {
    model::KernelExec k;
    k.start = time();
    k.end = time();
    k.launch_start = time();
    k.launch_end = time();
    k.correlation = rng_();
    k.name = names[rng_() % names.size()];
    k.device = u32();
    k.stream = u32();
    k.thread = u32();
    k.grid = {u32(), u32(), u32()};
    k.block = {u32(), u32(), u32()};
    k.registers_per_thread = u32();
    k.static_shared_bytes = u32();
    k.dynamic_shared_bytes = u32();
    k.graph_id = u32();
    k.flags = static_cast<uint8_t>(rng_());
    if (rng_() % 4 == 0) k.achieved_occupancy = static_cast<float>(rng_() % 1000) / 1000.0f;
    if (rng_() % 3 == 0) k.graph_node_id = u64();
    return k;
  }
  model::Copy copy() {
    model::Copy c{time(), time(), time(), time(), rng_(), u64(), u32(), u32(), u32()};
    c.direction = model::CopyDirection(below(6));
    c.src = model::MemoryKind(below(6));
    c.dst = model::MemoryKind(below(6));
    c.async = coin();
    return c;
  }
  model::Memset memset() {
    model::Memset m{time(), time(), time(), time(), rng_(), u64(), u32(), u32(), u32()};
    m.dst = model::MemoryKind(below(6));
    m.async = coin();
    return m;
  }
  model::HostSync sync() {
    return {time(), time(), rng_(), u32(), u32(), u32(), model::SyncKind(below(6))};
  }
  model::ApiCall apiCall(const std::vector<model::NameId>& names) {
    return {time(), time(), rng_(), names[rng_() % names.size()], u32()};
  }
  model::Allocation allocation() {
    return {time(), u64(), u64(), u32(), model::MemoryKind(below(6)), coin()};
  }
  model::MemorySample memorySample() {
    return {time(), u32(), static_cast<int64_t>(u64()),
            pick() ? -1 : static_cast<int64_t>(rng_() >> 1)};
  }
  model::Range range(const std::vector<model::NameId>& names) {
    return {
        time(), time(), names[rng_() % names.size()], u32(),
        u32(),  u32(),  model::RangeKind(below(6)),   pick() ? -1 : static_cast<int64_t>(u64())};
  }

  model::DeviceSample deviceSample() {
    return {time(),
            u32(),
            i64(),
            i64(),
            i64(),
            static_cast<int32_t>(u32()),
            static_cast<int32_t>(u32())};
  }
  model::PowerSample powerSample() {
    return {time(),
            u32(),
            pick() ? -1 : i64(),
            static_cast<int32_t>(u32()),
            static_cast<int32_t>(u32()),
            static_cast<int32_t>(u32())};
  }
  model::BlasCall blasCall() {
    model::BlasCall c;
    c.start = time();
    c.end = time();
    c.thread = u32();
    c.device = u32();
    c.stream = u32();
    c.api = model::BlasApi(below(4));
    c.a_type = static_cast<int32_t>(u32());
    c.b_type = static_cast<int32_t>(u32());
    c.c_type = static_cast<int32_t>(u32());
    c.compute_type = static_cast<int32_t>(u32());
    c.scale_type = static_cast<int32_t>(u32());
    c.math_mode = static_cast<int32_t>(u32());
    c.status = static_cast<int32_t>(u32());
    c.m = i64();
    c.n = i64();
    c.k = i64();
    c.batch = i64();
    return c;
  }
  model::Collective collective() {
    model::Collective c;
    c.start = time();
    c.end = time();
    c.correlation = u64();
    c.communicator = u64();
    c.sequence = u64();
    c.in_count = u64();
    c.out_count = u64();
    c.thread = u32();
    c.device = u32();
    c.stream = u32();
    c.group_size = static_cast<int32_t>(u32());
    c.group_rank = static_cast<int32_t>(u32());
    c.peer = static_cast<int32_t>(u32());
    c.kind = model::CollectiveKind(below(10));
    c.element = model::ElementType(below(13));
    return c;
  }

  // A random record of the kind `Record` (one overload per kind of model::RecordSet: a kind
  // without one fails to compile in the tests that walk every kind).
  using Names = std::vector<model::NameId>;
  model::KernelExec record(std::type_identity<model::KernelExec>, const Names& n) {
    return kernel(n);
  }
  model::Copy record(std::type_identity<model::Copy>, const Names&) { return copy(); }
  model::Memset record(std::type_identity<model::Memset>, const Names&) { return memset(); }
  model::HostSync record(std::type_identity<model::HostSync>, const Names&) { return sync(); }
  model::ApiCall record(std::type_identity<model::ApiCall>, const Names& n) { return apiCall(n); }
  model::Allocation record(std::type_identity<model::Allocation>, const Names&) {
    return allocation();
  }
  model::MemorySample record(std::type_identity<model::MemorySample>, const Names&) {
    return memorySample();
  }
  model::Range record(std::type_identity<model::Range>, const Names& n) { return range(n); }
  model::DeviceSample record(std::type_identity<model::DeviceSample>, const Names&) {
    return deviceSample();
  }
  model::BlasCall record(std::type_identity<model::BlasCall>, const Names&) { return blasCall(); }
  model::PowerSample record(std::type_identity<model::PowerSample>, const Names&) {
    return powerSample();
  }
  model::Collective record(std::type_identity<model::Collective>, const Names&) {
    return collective();
  }

private:
  bool pick() { return rng_() % 5 == 0; }
  int64_t i64() { return static_cast<int64_t>(u64()); }
  uint32_t edgeU32() {
    const uint32_t v[] = {0, 1, std::numeric_limits<uint32_t>::max(), 0x80000000u};
    return v[rng_() % 4];
  }
  uint64_t edgeU64() {
    const uint64_t v[] = {0, 1, std::numeric_limits<uint64_t>::max(), 1ull << 63};
    return v[rng_() % 4];
  }
  int64_t edge64() {
    const int64_t v[] = {1, -1, std::numeric_limits<int64_t>::min(),
                         std::numeric_limits<int64_t>::max()};
    return v[rng_() % 4];
  }
  std::mt19937_64 rng_;
  int64_t base_ = 3'600'000'000'000'000;
};

inline model::ProcessInfo sampleProcess() {
  model::ProcessInfo p;
  p.pid = 4242;
  p.ppid = 1;
  p.host = "node-17.cluster";
  static constexpr char kCommand[] = "python train.py --lr 3e-4 --name \xff\xfe\0x y";
  p.command = std::string(kCommand, sizeof kCommand - 1); // 39 bytes, NUL and 0xff inside
  p.rank = 3;
  p.local_rank = 1;
  p.world_size = 16;
  p.pod = "trainer-0";
  p.ns = "ml-team";
  p.container = "pytorch";
  p.job = "resnet-ddp";
  p.tier = model::CollectionTier::Cupti;
  p.tier_reason = "CUPTI available";
  return p;
}

inline model::DeviceInfo sampleDevice(uint32_t index) {
  model::DeviceInfo d;
  d.index = index;
  d.name = "NVIDIA H200";
  d.sm_count = 132;
  d.memory_total_bytes = 150'150'000'000ull;
  d.compute_major = 9;
  d.compute_minor = 0;
  d.mig_profile = index == 1 ? "1g.18gb" : "";
  d.max_threads_per_sm = 2048;
  d.max_blocks_per_sm = 32;
  d.registers_per_sm = 65536;
  d.shared_memory_per_sm = 233472;
  d.max_shared_memory_per_block = 232448;
  d.warp_size = 32;
  d.simulated = index == 2;
  return d;
}

template <class T> T expectValue(MessageDecoder::Result&& r) {
  if (!r) FAIL("decode error: " << toString(r.error().kind) << ": " << r.error().detail);
  REQUIRE(std::holds_alternative<T>(*r));
  return std::get<T>(std::move(*r));
}

inline DecodeError expectError(MessageDecoder::Result&& r) {
  REQUIRE_FALSE(r.has_value());
  return std::move(r.error());
}

} // namespace gpuwise::transport::testing
