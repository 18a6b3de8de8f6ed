// Objects kept on purpose for the life of the process: the shim's session, its configuration, the
// CUPTI activity-buffer pool. They are never freed because another thread (a hook, the drain, a
// CUPTI callback) may still reach them while the process exits, and freeing them then would turn a
// profiler's clean-up into the application's crash.
//
// keptForProcessLifetime(p) tells LeakSanitizer so (`__lsan_ignore_object`: the object and all it
// reaches are not reported), so the ASan lane reports real leaks only. The runtime's function is
// declared weak: in a normal build it is absent and the call is a null test.
#pragma once

extern "C" void __lsan_ignore_object(const void* p) __attribute__((weak));

namespace gpuwise::model {

template <typename T> T* keptForProcessLifetime(T* p) {
  if (__lsan_ignore_object && p) __lsan_ignore_object(p);
  return p;
}

} // namespace gpuwise::model
