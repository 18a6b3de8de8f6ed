#include "advisor/precision/demangle.h"

#include <cstdlib>
#include <cxxabi.h>

namespace gpuwise::profiler {

bool isMangled(std::string_view name) {
  return name.size() > 2 && name.substr(0, 2) == "_Z";
}

std::string demangle(std::string_view name) {
  if (!isMangled(name)) return std::string(name);
  std::string z(name); // __cxa_demangle wants a terminated string
  int status = 0;
  char* out = abi::__cxa_demangle(z.c_str(), nullptr, nullptr, &status);
  if (status != 0 || out == nullptr) {
    std::free(out);
    return z;
  }
  std::string result(out);
  std::free(out);
  return result;
}

namespace {

// Index of the '(' opening the trailing parameter list, or npos. Walks back from the end balancing
// () and <>, so "f<(T)1>(int)" finds the last '(' and a name without a parameter list finds none.
size_t parameterListStart(std::string_view s) {
  size_t end = s.size();
  constexpr std::string_view kConst = " const";
  if (end >= kConst.size() && s.substr(end - kConst.size()) == kConst) end -= kConst.size();
  if (end == 0 || s[end - 1] != ')') return std::string_view::npos;
  int depth = 0;
  for (size_t i = end; i-- > 0;) {
    char c = s[i];
    if (c == ')' || c == '>') ++depth;
    if (c == '(' || c == '<') --depth;
    if (depth == 0) return c == '(' ? i : std::string_view::npos;
  }
  return std::string_view::npos;
}

} // namespace

std::string shortKernelName(std::string_view name) {
  std::string full = demangle(name);
  std::string_view s(full);
  if (size_t p = parameterListStart(s); p != std::string_view::npos && p > 0) s = s.substr(0, p);

  // Keep only what sits outside template arguments.
  std::string flat;
  flat.reserve(s.size());
  int angle = 0;
  for (char c : s) {
    if (c == '<') {
      ++angle;
      continue;
    }
    if (c == '>' && angle > 0) {
      --angle;
      continue;
    }
    if (angle == 0) flat.push_back(c);
  }

  // The function name is the last space-separated word outside parentheses: this drops "void" and
  // return types such as "std::enable_if::type" but keeps "(anonymous namespace)::f" whole.
  int paren = 0;
  size_t word = 0;
  for (size_t i = 0; i < flat.size(); ++i) {
    if (flat[i] == '(') ++paren;
    if (flat[i] == ')' && paren > 0) --paren;
    if (flat[i] == ' ' && paren == 0 && i + 1 < flat.size()) word = i + 1;
  }
  std::string result = flat.substr(word);
  return result.empty() ? std::string(name) : result;
}

} // namespace gpuwise::profiler
