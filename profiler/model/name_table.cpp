#include "profiler/model/name_table.h"

namespace gpuwise::model {

NameTable::NameTable() { names_.emplace_back(); }

NameId NameTable::intern(std::string_view name) {
  if (name.empty()) return 0;
  if (auto it = index_.find(name); it != index_.end()) return it->second;
  auto id = static_cast<NameId>(names_.size());
  names_.emplace_back(name);
  index_.emplace(names_.back(), id);
  return id;
}

NameId NameTable::find(std::string_view name) const {
  if (auto it = index_.find(name); it != index_.end()) return it->second;
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
  slot.assign(name);
  if (!slot.empty()) index_.emplace(slot, id);
  return true;
}

} // namespace gpuwise::model
