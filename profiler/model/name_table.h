// Interned names: kernel names, API names, range names. Each process trace owns one table; records
// carry NameId. Id 0 is always the empty name, so a zero-initialised record names nothing.
//
// Not thread-safe: one owner (the shim's drain thread, an importer, the advisor's per-process
// stream) interns; analyzers only read.
#pragma once

#include "profiler/model/events.h"

#include <map>
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
  // One past the highest id of the dense part: every id below it is held in a vector (ids never
  // named read as empty). Ids above it that assign() was given are held sparsely (get() finds them
  // all the same), so an id far past the rest costs its own name, not the ids between.
  size_t size() const { return names_.size(); }
  // Names cut to kMaxNameBytes on their way in.
  uint64_t truncated() const { return truncated_; }
  // Ids named (dense and sparse, 0 included) and the bytes of their text: what the table holds.
  size_t count() const { return named_ + 1; }
  size_t textBytes() const { return text_bytes_; }

  // Sets the name of an id chosen elsewhere (a decoder mirroring the sender's table, whose ids
  // arrive in any order and with gaps: only the names its records use are sent). The dense part
  // grows to the id only while at least half of it would be named; farther ids are kept sparse
  // until the ids between are named. Returns false for id 0 or an id above kMaxNames, which a
  // decoder must treat as a malformed message.
  bool assign(NameId id, std::string_view name);

  static constexpr NameId kMaxNames = 1u << 24;

private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  // Whether the dense part may grow to hold `id` (at least half of it named, or small).
  bool denseCanReach(NameId id) const;
  // Moves sparse ids the dense part can now hold into it.
  void absorbSparse();
  void setText(std::string& slot, NameId id, std::string_view name);

  std::vector<std::string> names_;
  std::map<NameId, std::string> sparse_; // ids past the dense part
  std::unordered_map<std::string, NameId, Hash, std::equal_to<>> index_;
  uint64_t truncated_ = 0;
  size_t named_ = 0; // non-empty names held
  size_t text_bytes_ = 0;
};

} // namespace gpuwise::model
