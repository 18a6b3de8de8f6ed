// Interned names: kernel names, API names, range names. Each process trace owns one table; records
// carry NameId. Id 0 is always the empty name, so a zero-initialised record names nothing.
//
// Not thread-safe: one owner (the shim's drain thread, an importer, the advisor's per-process
// stream) interns; analyzers only read.
#pragma once

#include "profiler/model/events.h"

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace gpuwise::model {

class NameTable {
public:
  NameTable();

  // Returns the id of `name`, adding it if new. intern("") is 0. A name longer than
  // kMaxNameBytes is kept cut, with a hash of the whole (record_limits.h: boundedName).
  NameId intern(std::string_view name);
  // The id of `name` if present, 0 otherwise.
  NameId find(std::string_view name) const;
  // The name for `id`; empty for 0 or an id out of range.
  std::string_view get(NameId id) const;
  // Number of ids handed out, including 0.
  size_t size() const { return names_.size(); }
  // Names cut to kMaxNameBytes on their way in.
  uint64_t truncated() const { return truncated_; }

  // Sets the name of an id chosen elsewhere (a decoder mirroring the sender's table). Grows the
  // table as needed; ids skipped over get the empty name. Returns false for id 0 or an id above
  // kMaxNames, which a decoder must treat as a malformed message.
  bool assign(NameId id, std::string_view name);

  static constexpr NameId kMaxNames = 1u << 24;

private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::vector<std::string> names_;
  std::unordered_map<std::string, NameId, Hash, std::equal_to<>> index_;
  uint64_t truncated_ = 0;
};

} // namespace gpuwise::model
