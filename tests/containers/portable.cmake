# The portable shim in a clean Debian bullseye root; included from tests/containers/CMakeLists.txt.
# The test runs scripts/build-portable-shim itself (the first run debootstraps for minutes, later
# runs reuse build/portable), and reports "Skipped" only where the script cannot run (exit 77).
gpuwise_add_test(containers_portable_shim_test SOURCES portable_shim_test.cpp
  LIBS gpuwise_transport gpuwise_transport_zmq gpuwise_model LABELS containers portable TIMEOUT 1500)
set_tests_properties(containers_portable_shim_test PROPERTIES SKIP_RETURN_CODE 77 RUN_SERIAL ON)
# The control case preloads the ordinary shim in the old root.
add_dependencies(containers_portable_shim_test gpuwise)
