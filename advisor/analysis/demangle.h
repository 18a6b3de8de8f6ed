// Kernel names for people: Itanium-ABI mangled names (`_Z...`, as CUPTI reports them) demangled
// with abi::__cxa_demangle; anything else (Kineto traces already hold demangled names) unchanged.
//
// Any thread; allocates; never throws.
#pragma once

#include <string>
#include <string_view>

namespace gpuwise::advisor {

// The demangled form of `name`, or `name` itself when it is not a mangled C++ name or does not
// demangle.
std::string demangle(std::string_view name);

// A one-line display form at most `max_chars` long: the demangled name with template arguments
// and parameter lists elided from the middle when it is too long ("void foo<...>(...)").
std::string shortDisplayName(std::string_view demangled, size_t max_chars);

} // namespace gpuwise::advisor
