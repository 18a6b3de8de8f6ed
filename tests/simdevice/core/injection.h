// CUDA_INJECTION64_PATH, as the real driver honours it at cuInit: on the first runtime call of
// the process, dlopen the named library and call its `InitializeInjection()` once. Registration
// calls nvcc's static constructors make do not count (the real driver is not initialised by them).
//
// Any thread. The first caller runs the injection; calls the injected library makes from inside
// InitializeInjection on that thread pass straight through; other threads wait until it returns.
#pragma once

namespace gpuwise::sim {

void ensureInjected();

// fork() child handler: an injection in progress on another thread of the parent never finishes
// in the child; treat it as done.
void markInjectionDoneAfterFork();

// How many times InitializeInjection was called in this process (0 or 1); for tests.
int injectionCalls();

} // namespace gpuwise::sim
