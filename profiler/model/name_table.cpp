#include "profiler/model/name_table.h"

#include "profiler/model/record_limits.h"

namespace gpuwise::model {

namespace {
// Heterogeneous lookup (a string_view key without a std::string) is C++20 library support that
// libstdc++ has from gcc 11; the portable shim (scripts/build-portable-shim) is compiled with
// bullseye's gcc 10, which gets the key as a std::string instead.
#if defined(__cpp_lib_generic_unordered_lookup)
std::string_view key(std::string_view name) { return name; }
#else
std::string key(std::string_view name) { return std::string(name); }
#endif
} // namespace

NameTable::NameTable() { names_.emplace_back(); }

NameId NameTable::intern(std::string_view full) {
  if (full.empty()) return 0;
  std::string storage;
  const std::string_view name = boundedName(full, storage);
  if (auto it = index_.find(key(name)); it != index_.end()) return it->second;
  auto id = static_cast<NameId>(names_.size());
  names_.emplace_back(name);
  index_.emplace(names_.back(), id);
  if (name.size() != full.size()) ++truncated_;
  return id;
}

NameId NameTable::find(std::string_view full) const {
  std::string storage;
  const std::string_view name = boundedName(full, storage);
  if (auto it = index_.find(key(name)); it != index_.end()) return it->second;
  return 0;
}

std::string_view NameTable::get(NameId id) const {
  return id < names_.size() ? std::string_view(names_[id]) : std::string_view();
}

bool NameTable::assign(NameId id, std::string_view name) {
  if (id == 0 || id > kMaxNames) return false;
  if (id >= names_.size()) names_.resize(size_t{id} + 1);
  auto& slot = names_[id];
  if (!slot.empty()) {
    if (auto it = index_.find(slot); it != index_.end() && it->second == id) index_.erase(it);
  }
  std::string storage;
  slot.assign(boundedName(name, storage));
  if (!slot.empty()) index_.emplace(slot, id);
  return true;
}

} // namespace gpuwise::model
