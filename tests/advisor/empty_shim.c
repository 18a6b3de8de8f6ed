/* Stands in for libgpuwise.so in `gpuwise run` tests: a real shared library that LD_PRELOAD can
   load, doing nothing, so the tests check the environment without the real shim. */
int gpuwise_test_empty_shim(void) {
  return 0;
}
