// The test-only functions FakeCudart exports beside its CUDA entry points.
#pragma once

extern "C" {
long fakeCalls(const char* name); // calls of `name` that reached the fake
void fakeSetSyncDelayNs(long ns); // synchronising calls sleep this long
}

// cudaMalloc/cuMemAlloc_v2 of this many bytes fail (result pass-through checks).
inline constexpr unsigned long kFakeFailBytes = 0xdead;
