#include "advisor/webhook/json_patch.h"

#include <charconv>

namespace gpuwise::advisor {

using json = nlohmann::json;

std::string escapePointerToken(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  for (char c : token) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

const json* findPointer(const json& doc, const std::string& pointer) {
  const json* at = &doc;
  size_t pos = 0;
  while (pos < pointer.size()) {
    if (pointer[pos] != '/') return nullptr;
    size_t end = pointer.find('/', pos + 1);
    if (end == std::string::npos) end = pointer.size();
    std::string token;
    for (size_t i = pos + 1; i < end; ++i) {
      if (pointer[i] == '~' && i + 1 < end && (pointer[i + 1] == '0' || pointer[i + 1] == '1')) {
        token += pointer[i + 1] == '0' ? '~' : '/';
        ++i;
      } else {
        token += pointer[i];
      }
    }
    if (at->is_object()) {
      auto it = at->find(token);
      if (it == at->end()) return nullptr;
      at = &*it;
    } else if (at->is_array()) {
      size_t index = 0;
      auto [p, ec] = std::from_chars(token.data(), token.data() + token.size(), index);
      if (ec != std::errc() || p != token.data() + token.size() || index >= at->size())
        return nullptr;
      at = &(*at)[index];
    } else {
      return nullptr;
    }
    pos = end;
  }
  return at;
}

void JsonPatch::add(std::string path, json value) {
  first_add_.try_emplace(path, ops_.size());
  ops_.push_back({{"op", "add"}, {"path", std::move(path)}, {"value", std::move(value)}});
}

void JsonPatch::replace(std::string path, json value) {
  ops_.push_back({{"op", "replace"}, {"path", std::move(path)}, {"value", std::move(value)}});
}

json* JsonPatch::createdValue(const std::string& path) {
  auto it = first_add_.find(path);
  return it == first_add_.end() ? nullptr : &ops_[it->second]["value"];
}

void JsonPatch::addMember(const json& doc, const std::string& object_path, const std::string& key,
                          json value) {
  if (json* made = createdValue(object_path); made && made->is_object()) {
    (*made)[key] = std::move(value);
    return;
  }
  const json* existing = findPointer(doc, object_path);
  if (existing && existing->is_object()) {
    add(object_path + "/" + escapePointerToken(key), std::move(value));
  } else {
    add(object_path, json{{key, std::move(value)}});
  }
}

void JsonPatch::append(const json& doc, const std::string& array_path, json value) {
  if (json* made = createdValue(array_path); made && made->is_array()) {
    made->push_back(std::move(value));
    return;
  }
  const json* existing = findPointer(doc, array_path);
  if (existing && existing->is_array()) {
    add(array_path + "/-", std::move(value));
  } else {
    add(array_path, json::array({std::move(value)}));
  }
}

void JsonPatch::insert(const json& doc, const std::string& array_path, size_t index, json value) {
  if (json* made = createdValue(array_path); made && made->is_array()) {
    index = std::min(index, made->size());
    made->insert(made->begin() + static_cast<std::ptrdiff_t>(index), std::move(value));
    return;
  }
  const json* existing = findPointer(doc, array_path);
  if (existing && existing->is_array()) {
    add(array_path + "/" + std::to_string(index), std::move(value));
  } else {
    add(array_path, json::array({std::move(value)}));
  }
}

} // namespace gpuwise::advisor
