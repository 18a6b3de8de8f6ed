#include "profiler/model/name_table.h"

#include "profiler/model/record_limits.h"

namespace gpuwise::model {

namespace {
// Heterogeneous lookup (a string_view key without a std::string) is C++20 library support that
// libstdc++ has from gcc 11; the portable shim (scripts/build-portable-shim) is compiled with
// bullseye's gcc 10, which gets the key as a std::string instead.
#if defined(__cpp_lib_generic_unordered_lookup)
std::string_view key(std::string_view name) {
  return name;
}
#else
std::string key(std::string_view name) {
  return std::string(name);
}
#endif
} // namespace

NameTable::NameTable() {
  names_.emplace_back();
}

NameId NameTable::intern(std::string_view full) {
  if (full.empty()) return 0;
  std::string storage;
  const std::string_view name = boundedName(full, storage);
  if (auto it = index_.find(key(name)); it != index_.end()) return it->second;
  absorbSparse(); // the next dense id must not be one held sparsely
  while (!sparse_.empty() && sparse_.begin()->first == names_.size()) {
    names_.push_back(std::move(sparse_.begin()->second));
    sparse_.erase(sparse_.begin());
  }
  auto id = static_cast<NameId>(names_.size());
  names_.emplace_back(name);
  index_.emplace(names_.back(), id);
  if (name.size() != full.size()) ++truncated_;
  ++named_;
  text_bytes_ += name.size();
  return id;
}

NameId NameTable::find(std::string_view full) const {
  std::string storage;
  const std::string_view name = boundedName(full, storage);
  if (auto it = index_.find(key(name)); it != index_.end()) return it->second;
  return 0;
}

std::string_view NameTable::get(NameId id) const {
  if (id < names_.size()) return names_[id];
  if (sparse_.empty()) return {};
  auto it = sparse_.find(id);
  return it == sparse_.end() ? std::string_view() : std::string_view(it->second);
}

bool NameTable::denseCanReach(NameId id) const {
  // Slots a gap would leave empty cost a std::string each: allow them while they stay at most
  // half of the dense part (plus a little slack for a small table).
  constexpr size_t kSlack = 1024;
  return size_t{id} + 1 <= 2 * (named_ + 1) + kSlack;
}

void NameTable::absorbSparse() {
  while (!sparse_.empty()) {
    auto first = sparse_.begin();
    if (first->first >= names_.size()) {
      if (!denseCanReach(first->first)) return;
      names_.resize(size_t{first->first} + 1);
    }
    names_[first->first] = std::move(first->second);
    sparse_.erase(first);
  }
}

void NameTable::setText(std::string& slot, NameId id, std::string_view name) {
  if (!slot.empty()) {
    if (auto it = index_.find(slot); it != index_.end() && it->second == id) index_.erase(it);
    --named_;
    text_bytes_ -= slot.size();
  }
  slot.assign(name);
  if (!slot.empty()) {
    index_.emplace(slot, id);
    ++named_;
    text_bytes_ += slot.size();
  }
}

bool NameTable::assign(NameId id, std::string_view full) {
  if (id == 0 || id > kMaxNames) return false;
  std::string storage;
  const std::string_view name = boundedName(full, storage);
  if (id < names_.size()) {
    setText(names_[id], id, name);
    absorbSparse(); // a name more may let the dense part reach the sparse ids
    return true;
  }
  if (denseCanReach(id)) {
    names_.resize(size_t{id} + 1);
    setText(names_[id], id, name);
    absorbSparse();
    return true;
  }
  std::string& slot = sparse_[id];
  setText(slot, id, name);
  if (slot.empty()) sparse_.erase(id);
  return true;
}

} // namespace gpuwise::model
