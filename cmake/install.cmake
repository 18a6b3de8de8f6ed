# `make install PREFIX=...` and `make package` (a Debian package through CPack), included last from
# the top-level CMakeLists.txt. The installed layout, which `gpuwise run` finds relative to its own
# binary (advisor/cli/locations.cpp):
#   bin/gpuwise
#   lib/gpuwise/libgpuwise.so              the shim
#   lib/gpuwise/portable/libgpuwise.so     the portable shim, where scripts/build-portable-shim ran
#   lib/gpuwise/simdevice/                 the simulated device (gpuwise run --simulate)
#   lib/gpuwise/samples/                   the CUDA samples
#   share/doc/gpuwise/                     README.md and docs/*.md
#   share/man/man1/gpuwise.1               generated from the CLI's help (scripts/gen-manpage)

# The man page, from the built CLI's --help (so it cannot drift from it).
set(GPUWISE_MANPAGE ${CMAKE_BINARY_DIR}/man/gpuwise.1)
add_custom_command(OUTPUT ${GPUWISE_MANPAGE}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/man
  COMMAND python3 ${PROJECT_SOURCE_DIR}/scripts/gen-manpage $<TARGET_FILE:gpuwise_exe>
          ${PROJECT_VERSION} ${GPUWISE_MANPAGE}
  DEPENDS gpuwise_exe ${PROJECT_SOURCE_DIR}/scripts/gen-manpage
  COMMENT "gpuwise.1 from gpuwise --help"
  VERBATIM)
add_custom_target(gpuwise_manpage ALL DEPENDS ${GPUWISE_MANPAGE})

# What the install rules need built, and no test: `make install` and `make package` build this.
# Installing (and cpack's preinstall step) must not build `all`, the test suite included.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)
add_custom_target(install_deps)
add_dependencies(install_deps gpuwise_exe gpuwise_live gpuwise gpuwise_manpage)

install(TARGETS gpuwise_exe RUNTIME DESTINATION bin)
install(TARGETS gpuwise LIBRARY DESTINATION lib/gpuwise)
# run, advisor and webhook (advisor/cli/live_loader.cpp looks for it here too).
install(TARGETS gpuwise_live LIBRARY DESTINATION lib/gpuwise)
install(FILES ${CMAKE_BINARY_DIR}/portable/lib/libgpuwise.so DESTINATION lib/gpuwise/portable
        OPTIONAL)
if(TARGET simdevice)
  set(gpuwise_sim_libs gwsim_core gwsim_cudart gwsim_cupti gwsim_nvml gwsim_cublaslt gwsim_cublas)
  if(TARGET gwsim_nccl)
    list(APPEND gpuwise_sim_libs gwsim_nccl)
  endif()
  # RUNPATH $ORIGIN already (tests/simdevice/CMakeLists.txt): they find libgwsim_core.so beside them.
  install(TARGETS ${gpuwise_sim_libs} LIBRARY DESTINATION lib/gpuwise/simdevice)
  add_dependencies(install_deps simdevice)
endif()
if(GPUWISE_BUILD_SAMPLES)
  install(TARGETS ${GPUWISE_SAMPLES} RUNTIME DESTINATION lib/gpuwise/samples)
  add_dependencies(install_deps samples)
endif()
install(FILES README.md DESTINATION share/doc/gpuwise)
install(DIRECTORY docs/ DESTINATION share/doc/gpuwise FILES_MATCHING PATTERN "*.md")
install(FILES ${GPUWISE_MANPAGE} DESTINATION share/man/man1)

# The Debian package: build/gpuwise_<version>_<arch>.deb. Its dependencies are derived by
# dpkg-shlibdeps from what the installed binaries link (libzmq5, libssl3, libsqlite3-0, ...); the
# simulated device's own libraries (the samples need its libcudart.so.13) count as private.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME gpuwise)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR gpuwise)
set(CPACK_PACKAGE_CONTACT "gpuwise maintainers <gpuwise@invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "CUDA training-job profiler shim and advisor: where the GPU time goes, and what to change")
set(CPACK_PACKAGE_DESCRIPTION
    "gpuwise injects a small library into a CUDA training process, measures where the GPU time \
went and recommends changes with their evidence and expected saving; it also analyses PyTorch \
profiler traces and Nsight Systems exports offline. Includes a simulated device for machines \
without a GPU (gpuwise run --simulate).")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_OUTPUT_FILE_PREFIX ${CMAKE_BINARY_DIR})
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS
    ${CMAKE_BINARY_DIR}/simdevice ${CMAKE_BINARY_DIR}/lib)
include(CPack)
