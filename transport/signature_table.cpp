#include "transport/signature_table.h"

namespace gpuwise::transport {

KernelSignatureKey KernelSignatureKey::of(const model::KernelExec& k) {
  KernelSignatureKey s;
  s.name = k.name;
  s.device = k.device;
  s.stream = k.stream;
  s.thread = k.thread;
  s.grid_x = k.grid.x;
  s.grid_y = k.grid.y;
  s.grid_z = k.grid.z;
  s.block_x = k.block.x;
  s.block_y = k.block.y;
  s.block_z = k.block.z;
  s.registers = k.registers_per_thread;
  s.static_shared = k.static_shared_bytes;
  s.dynamic_shared = k.dynamic_shared_bytes;
  s.graph_id = k.graph_id;
  s.flags = k.flags;
  return s;
}

void KernelSignatureKey::applyTo(model::KernelExec& k) const {
  k.name = name;
  k.device = device;
  k.stream = stream;
  k.thread = thread;
  k.grid = {grid_x, grid_y, grid_z};
  k.block = {block_x, block_y, block_z};
  k.registers_per_thread = registers;
  k.static_shared_bytes = static_shared;
  k.dynamic_shared_bytes = dynamic_shared;
  k.graph_id = graph_id;
  k.flags = flags;
}

size_t KernelSignatureKeyHash::operator()(const KernelSignatureKey& k) const {
  // Pairs of fields as 64-bit words, each multiplied by its own odd constant: the multiplies are
  // independent (no serial chain), which matters at one lookup per kernel event.
  auto w = [](uint32_t a, uint32_t b) { return uint64_t{a} << 32 | b; };
  const uint64_t h = w(k.name, k.device) * 0x9E3779B97F4A7C15ull +
                     w(k.stream, k.thread) * 0xBF58476D1CE4E5B9ull +
                     w(k.grid_x, k.grid_y) * 0x94D049BB133111EBull +
                     w(k.grid_z, k.block_x) * 0xD6E8FEB86659FD93ull +
                     w(k.block_y, k.block_z) * 0xA0761D6478BD642Full +
                     w(k.registers, k.static_shared) * 0xE7037ED1A0B428DBull +
                     w(k.dynamic_shared, k.graph_id) * 0x8EBC6AF09C88C6E3ull +
                     uint64_t{k.flags} * 0x589965CC75374CC3ull;
  return static_cast<size_t>(h ^ (h >> 29));
}

uint32_t SignatureInterner::intern(const KernelSignatureKey& key, bool* introduced) {
  *introduced = false;
  if (auto it = index_.find(key); it != index_.end()) return it->second;
  if (by_id_.size() >= kMaxSignatures) return 0;
  const auto id = static_cast<uint32_t>(by_id_.size());
  by_id_.push_back(key);
  index_.emplace(key, id);
  *introduced = true;
  return id;
}

void SignatureInterner::truncate(uint32_t next_id) {
  while (by_id_.size() > next_id && by_id_.size() > 1) {
    index_.erase(by_id_.back());
    by_id_.pop_back();
  }
}

void SignatureInterner::clear() {
  index_.clear();
  by_id_.resize(1);
}

void SignatureMirror::define(uint32_t id, const KernelSignatureKey& key) {
  if (id == 0 || id >= kMaxSignatures) return;
  if (id >= by_id_.size()) {
    size_t n = by_id_.empty() ? 256 : by_id_.size();
    while (n <= id)
      n *= 2;
    by_id_.resize(n);
    defined_.resize(n);
  }
  by_id_[id] = key;
  defined_[id] = 1;
}

void SignatureMirror::clear() {
  by_id_.clear();
  defined_.clear();
}

} // namespace gpuwise::transport
