// The real function behind a hook: found once with dlvsym(RTLD_NEXT, name, version) (the runtime
// versions every symbol "libcudart.so.13"), falling back to dlsym(RTLD_NEXT, name), and cached in
// an atomic. Constant-initialised, so a hook reaches it with one acquire load and no guard.
//
// RTLD_NEXT searches the global scope only. A runtime that arrived with an RTLD_LOCAL dlopen (a
// Python extension or a ctypes library that links libcudart, loaded without RTLD_GLOBAL), or one
// still being loaded when its dependant's constructor registers kernels, is not in it; the library
// already loaded is then found by name (dlopen RTLD_NOLOAD: never loads anything) and searched.
//
// A missing symbol is not cached: the library may be dlopen'd later, and the hook keeps answering
// with the API's "not initialised" error until then.
//
// Threads: any.
#pragma once

#include <atomic>

#include <dlfcn.h>

namespace gpuwise::interposer {

inline constexpr const char* kCudartVersion = "libcudart.so.13"; // also its soname
inline constexpr const char* kDriverLibrary = "libcuda.so.1";

template <class Fn> class RealSymbol {
public:
  // `library`: the soname the symbol lives in, for the RTLD_NOLOAD fallback.
  constexpr RealSymbol(const char* name, const char* version, const char* library)
      : name_(name), version_(version), library_(library) {}

  Fn get() {
    Fn f = fn_.load(std::memory_order_acquire);
    if (__builtin_expect(f != nullptr, 1)) return f;
    return resolve();
  }
  const char* name() const { return name_; }

private:
  Fn resolve() {
    void* p = version_ ? dlvsym(RTLD_NEXT, name_, version_) : nullptr;
    if (!p) p = dlsym(RTLD_NEXT, name_);
    if (!p) p = fromLoadedLibrary();
    Fn f = reinterpret_cast<Fn>(p);
    if (f) fn_.store(f, std::memory_order_release);
    return f;
  }

  void* fromLoadedLibrary() const {
    if (!library_) return nullptr;
    void* handle = dlopen(library_, RTLD_LAZY | RTLD_NOLOAD);
    if (!handle) return nullptr;
    void* p = version_ ? dlvsym(handle, name_, version_) : nullptr;
    if (!p) p = dlsym(handle, name_);
    // The library stays loaded by whoever loaded it; only our reference is dropped.
    dlclose(handle);
    return p;
  }

  const char* name_;
  const char* version_;
  const char* library_;
  std::atomic<Fn> fn_{nullptr};
};

} // namespace gpuwise::interposer

// Defines the RealSymbol for hook `fn` as `real_<fn>`, typed from the function's own declaration.
#define GPUWISE_REAL_RUNTIME(fn)                                                                   \
  constinit ::gpuwise::interposer::RealSymbol<decltype(&::fn)> real_##fn {                         \
#fn, ::gpuwise::interposer::kCudartVersion, ::gpuwise::interposer::kCudartVersion              \
  }
#define GPUWISE_REAL_DRIVER(fn)                                                                    \
  constinit ::gpuwise::interposer::RealSymbol<decltype(&::fn)> real_##fn {                         \
#fn, nullptr, ::gpuwise::interposer::kDriverLibrary                                            \
  }

// Every exported hook carries this: default visibility in a library built with hidden visibility.
#define GPUWISE_EXPORT extern "C" __attribute__((visibility("default")))
