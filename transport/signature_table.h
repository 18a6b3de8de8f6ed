// Kernel signatures: the attributes of a kernel launch that do not change from one execution of
// the same launch site to the next (name, device, stream, launching thread, grid, block,
// registers, shared memory, graph, flags). The encoder interns them per connection epoch and a
// kernel row on the wire refers to one by id; the decoder mirrors the table.
//
// Threads: each table belongs to its encoder's or decoder's thread.
#pragma once

#include "profiler/model/events.h"
#include "transport/kernel_timing.h"

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace gpuwise::transport {

struct KernelSignatureKey {
  uint32_t name = 0, device = 0, stream = 0, thread = 0;
  uint32_t grid_x = 1, grid_y = 1, grid_z = 1, block_x = 1, block_y = 1, block_z = 1;
  uint32_t registers = 0, static_shared = 0, dynamic_shared = 0, graph_id = 0;
  uint8_t flags = 0;

  static KernelSignatureKey of(const model::KernelExec& k);
  // Writes the signature's fields into `k`, leaving its times and occupancy alone.
  void applyTo(model::KernelExec& k) const;
  bool operator==(const KernelSignatureKey&) const = default;
};

struct KernelSignatureKeyHash {
  size_t operator()(const KernelSignatureKey& k) const;
};

// Encoder side. Ids are handed out in order from 1, so the ids one message introduced form one
// range and forgetting them (a failed send) is a truncation.
class SignatureInterner {
public:
  // The id of `key`, adding it if new (then `*introduced` is true). 0 when the epoch's table is
  // full (kMaxSignatures - 1 entries).
  uint32_t intern(const KernelSignatureKey& key, bool* introduced);
  const KernelSignatureKey& get(uint32_t id) const { return by_id_[id]; }
  // The id the next new signature gets; ids below it are in use.
  uint32_t nextId() const { return static_cast<uint32_t>(by_id_.size()); }
  // Forgets the signatures with ids >= next_id.
  void truncate(uint32_t next_id);
  void clear();

private:
  std::unordered_map<KernelSignatureKey, uint32_t, KernelSignatureKeyHash> index_;
  std::vector<KernelSignatureKey> by_id_ = std::vector<KernelSignatureKey>(1); // id 0 unused
};

// Decoder side: the sender's signatures of the current epoch, by id.
class SignatureMirror {
public:
  void define(uint32_t id, const KernelSignatureKey& key); // id in 1 .. kMaxSignatures - 1
  // nullptr when `id` was never defined in this epoch.
  const KernelSignatureKey* find(uint32_t id) const {
    return id < defined_.size() && defined_[id] ? &by_id_[id] : nullptr;
  }
  void clear();

private:
  std::vector<KernelSignatureKey> by_id_;
  std::vector<uint8_t> defined_;
};

} // namespace gpuwise::transport
