# The portable shim: libgpuwise.so rebuilt in a Debian bullseye root (gcc 10, glibc 2.31) with
# ZeroMQ, zstd, zlib and the C++ runtime linked in statically, so that it needs nothing from the
# training image but glibc 2.28+. `cmake --build build --target gpuwise_portable` runs
# scripts/build-portable-shim (root and debootstrap needed; the roots are cached under
# build/portable); the result is build/portable/lib/libgpuwise.so. Not part of `all`.
add_custom_target(gpuwise_portable
  COMMAND ${PROJECT_SOURCE_DIR}/scripts/build-portable-shim ${CMAKE_BINARY_DIR}
  DEPENDS ${PROJECT_SOURCE_DIR}/scripts/build-portable-shim
  COMMENT "scripts/build-portable-shim: build/portable/lib/libgpuwise.so"
  USES_TERMINAL VERBATIM)
# The script replays the host build's compile commands and link line: generate the schema
# header first (the script also builds it) and keep the link line current.
add_dependencies(gpuwise_portable gpuwise_transport_schema)
