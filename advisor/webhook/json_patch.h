// Building RFC 6902 JSON Patch documents (what a mutating admission webhook answers with) and the
// RFC 6901 JSON Pointers inside them. Pure values, no I/O; any thread.
//
// The API server applies the patch strictly (evanphx/json-patch): "add" needs the parent of its
// path to exist, so a missing array or map is created whole and an existing one is extended. The
// helpers here make that choice from the document being patched, so callers cannot get it wrong.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <unordered_map>

namespace gpuwise::advisor {

// One reference token of a JSON Pointer: '~' -> "~0", '/' -> "~1" ("nvidia.com/gpu" ->
// "nvidia.com~1gpu"). Order matters: '~' first, or "~1" from a '/' would be escaped again.
std::string escapePointerToken(std::string_view token);

class JsonPatch {
public:
  void add(std::string path, nlohmann::json value);
  void replace(std::string path, nlohmann::json value);

  // Puts `key: value` into the object at `object_path` of `doc`: one "add" of {key: value} when
  // that object is absent (or null), else one "add" of the escaped member.
  void addMember(const nlohmann::json& doc, const std::string& object_path, const std::string& key,
                 nlohmann::json value);
  // Appends `value` to the array at `array_path` of `doc`, creating the array when absent.
  void append(const nlohmann::json& doc, const std::string& array_path, nlohmann::json value);
  // Inserts `value` at `index` of the array at `array_path`, creating the array when absent
  // (index must then be 0, 1, ... in call order, as if it existed empty).
  void insert(const nlohmann::json& doc, const std::string& array_path, size_t index,
              nlohmann::json value);

  bool empty() const { return ops_.empty(); }
  size_t size() const { return ops_.size(); }
  const nlohmann::json& ops() const { return ops_; }

private:
  // The value of an earlier "add" that created `path` whole: later members, appends and inserts
  // go into it, since the document being patched does not have it yet.
  // Found through an index, not a scan of the operations: a pod with thousands of containers
  // makes thousands of operations, and a scan per operation made building the patch quadratic.
  nlohmann::json* createdValue(const std::string& path);

  nlohmann::json ops_ = nlohmann::json::array();
  std::unordered_map<std::string, size_t> first_add_; // path -> index in ops_ of its first "add"
};

// The value at `pointer` in `doc`, or nullptr when any step is missing (never throws).
const nlohmann::json* findPointer(const nlohmann::json& doc, const std::string& pointer);

} // namespace gpuwise::advisor
