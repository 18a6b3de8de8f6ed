// Itanium C++ demangling for kernel names.
//
// CUPTI reports kernel names mangled ("_ZN7cutlass6KernelI..."), Kineto traces usually demangled
// ("void cutlass::Kernel<...>(...)"), and some names are plain C identifiers
// ("volta_sgemm_128x64_nn", "nvjet_tst_...", "triton_poi_fused_add_0"). The classifier and the
// report want the readable form; both go through here so they agree.
//
// Any thread. Allocates (abi::__cxa_demangle mallocs), so never call it on the application's launch
// path: the shim ships names as ids and the advisor demangles once per distinct name.
#pragma once

#include <string>
#include <string_view>

namespace gpuwise::profiler {

// True when `name` looks like an Itanium-mangled symbol ("_Z" followed by more).
bool isMangled(std::string_view name);

// The demangled form of `name`, or `name` unchanged when it is not mangled or cannot be demangled
// (truncated names, vendor extensions the runtime's demangler rejects). Never throws.
std::string demangle(std::string_view name);

// A short display form of a (demangled) kernel name for tables: drops a leading "void ", the
// parameter list and template arguments, keeping the qualified function name:
//   "void at::native::vectorized_elementwise_kernel<4, ...>(int, ...)" ->
//   "at::native::vectorized_elementwise_kernel"
// Plain C names come back unchanged. Mangled names are demangled first.
std::string shortKernelName(std::string_view name);

} // namespace gpuwise::profiler
