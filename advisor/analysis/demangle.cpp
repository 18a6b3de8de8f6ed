#include "advisor/analysis/demangle.h"

#include <cstdlib>
#include <cxxabi.h>
#include <memory>

namespace gpuwise::advisor {

std::string demangle(std::string_view name) {
  // Mangled names start with _Z (or __Z on some platforms); __cxa_demangle would also accept plain
  // type names like "i", which must stay as they are.
  if (!(name.starts_with("_Z") || name.starts_with("__Z"))) return std::string(name);
  std::string owned(name);
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(
      abi::__cxa_demangle(owned.c_str(), nullptr, nullptr, &status), std::free);
  if (status != 0 || !out) return owned;
  return std::string(out.get());
}

namespace {

// Removes the contents of every outermost <...> and (...) group, keeping the brackets.
std::string elideGroups(std::string_view s) {
  std::string out;
  int depth = 0;
  for (char c : s) {
    bool open = c == '<' || c == '(';
    bool close = c == '>' || c == ')';
    if (open) {
      if (depth == 0) out += c, out += "...";
      ++depth;
    } else if (close && depth > 0) {
      --depth;
      if (depth == 0) out += c;
    } else if (depth == 0) {
      out += c;
    }
  }
  return out;
}

} // namespace

std::string shortDisplayName(std::string_view demangled, size_t max_chars) {
  if (demangled.size() <= max_chars) return std::string(demangled);
  std::string s = elideGroups(demangled);
  if (s.size() <= max_chars) return s;
  if (max_chars < 4) return s.substr(0, max_chars);
  return s.substr(0, max_chars - 3) + "...";
}

} // namespace gpuwise::advisor
